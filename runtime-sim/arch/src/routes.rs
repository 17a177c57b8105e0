//! The colour configuration of an image, interned: each distinct [`ColorConfig`] is kept
//! once, and every configured (PE, colour) is a [`PlacedRoute`] naming it. A whole wafer
//! configures millions of routes but only a handful of distinct ones, so this is what the
//! compiler builds, the image stores ([`SECTION_ROUTES`]) and the simulator loads.
//!
//! # Binary layout of [`SECTION_ROUTES`]
//!
//! 1. A little-endian `u32` `n`, then `n` bytes: the distinct configurations as a JSON
//!    array of [`ColorConfig`] (their `x` and `y` are 0; the places follow).
//! 2. Then, until the end of the section, one entry per placed route, in order: a
//!    LEB128 varint `h = config << 1 | moved`; if `moved` is 1, two zigzag LEB128
//!    varints follow, the column and row of this route minus those of the previous one
//!    (the first route's are relative to `(0, 0)`); if 0, the route is on the previous
//!    route's PE (or on `(0, 0)` for the first).
//!
//! [`Routes::decode`] never panics on malformed bytes.
//!
//! [`SECTION_ROUTES`]: crate::image::SECTION_ROUTES

use crate::image::ColorConfig;
use std::collections::HashMap;
use std::ops::Deref;

/// Up to this many distinct configurations are looked up by comparing each.
const SMALL: usize = 32;

/// One configured colour of one PE: where, and which of [`Routes::configs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedRoute {
    /// Column within the rectangle.
    pub x: u32,
    /// Row within the rectangle.
    pub y: u32,
    /// Index into [`Routes::configs`].
    pub config: u32,
}

/// Every colour configuration of an image, in the order it was configured.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    /// The distinct configurations (with `x` and `y` 0).
    configs: Vec<ColorConfig>,
    /// The index of each of `configs`, once there are more than [`SMALL`].
    index: HashMap<ColorConfig, u32>,
    /// Every configured (PE, colour).
    placed: Vec<PlacedRoute>,
}

/// One route of [`Routes`], seen as the [`ColorConfig`] of its PE: `x` and `y` are the
/// PE's; everything else reads through to the shared configuration (whose own `x` and
/// `y` are 0, so use [`Route::to_config`] for a complete `ColorConfig`).
#[derive(Clone, Copy, Debug)]
pub struct Route<'a> {
    /// Column within the rectangle.
    pub x: u32,
    /// Row within the rectangle.
    pub y: u32,
    /// Index into [`Routes::configs`].
    pub index: u32,
    config: &'a ColorConfig,
}

impl Deref for Route<'_> {
    type Target = ColorConfig;
    fn deref(&self) -> &ColorConfig {
        self.config
    }
}

impl<'a> Route<'a> {
    /// The configuration shared by every route with this one's [`Route::index`] (its
    /// `x` and `y` are 0).
    pub fn shared(&self) -> &'a ColorConfig {
        self.config
    }

    /// This route as a standalone `ColorConfig` at its PE.
    pub fn to_config(&self) -> ColorConfig {
        ColorConfig {
            x: self.x,
            y: self.y,
            ..self.config.clone()
        }
    }
}

impl PartialEq for Routes {
    /// Equal when they configure the same colours the same way in the same order (however
    /// the configurations are numbered).
    fn eq(&self, other: &Routes) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other.iter())
                .all(|(a, b)| a.x == b.x && a.y == b.y && *a.config == *b.config)
    }
}

impl Routes {
    /// No routes.
    pub fn new() -> Routes {
        Routes::default()
    }

    /// The number of `config`, ignoring its `x` and `y`, adding it if new.
    pub fn intern(&mut self, config: &ColorConfig) -> u32 {
        if config.x == 0 && config.y == 0 {
            return self.intern_unplaced(config);
        }
        self.intern_unplaced(&ColorConfig {
            x: 0,
            y: 0,
            ..config.clone()
        })
    }

    /// [`Routes::intern`] of a configuration whose `x` and `y` are 0.
    fn intern_unplaced(&mut self, key: &ColorConfig) -> u32 {
        // A layout has a handful of distinct configurations: comparing them is cheaper
        // than hashing; the map takes over beyond that.
        let found = if self.configs.len() <= SMALL {
            self.configs.iter().position(|c| c == key).map(|i| i as u32)
        } else {
            self.index.get(key).copied()
        };
        if let Some(i) = found {
            return i;
        }
        let i = self.configs.len() as u32;
        self.configs.push(key.clone());
        if self.configs.len() == SMALL + 1 {
            self.index = (0..)
                .zip(&self.configs)
                .map(|(i, c)| (c.clone(), i))
                .collect();
        } else if self.configs.len() > SMALL {
            self.index.insert(key.clone(), i);
        }
        i
    }

    /// Configures `config.color` of PE `(config.x, config.y)`.
    pub fn push(&mut self, mut config: ColorConfig) {
        let (x, y) = (config.x, config.y);
        (config.x, config.y) = (0, 0);
        let i = self.intern_unplaced(&config);
        self.place(x, y, i);
    }

    /// Configures PE `(x, y)` with configuration number `config` (from
    /// [`Routes::intern`]).
    pub fn place(&mut self, x: u32, y: u32, config: u32) {
        self.placed.push(PlacedRoute { x, y, config });
    }

    /// The number of configured (PE, colour)s.
    pub fn len(&self) -> usize {
        self.placed.len()
    }

    /// Whether nothing is configured.
    pub fn is_empty(&self) -> bool {
        self.placed.is_empty()
    }

    /// The distinct configurations.
    pub fn configs(&self) -> &[ColorConfig] {
        &self.configs
    }

    /// The configured (PE, colour)s, in order.
    pub fn placed(&self) -> &[PlacedRoute] {
        &self.placed
    }

    /// The `i`-th route.
    pub fn get(&self, i: usize) -> Option<Route<'_>> {
        let p = self.placed.get(i)?;
        Some(Route {
            x: p.x,
            y: p.y,
            index: p.config,
            config: self.configs.get(p.config as usize)?,
        })
    }

    /// Every route, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Route<'_>> + '_ {
        // `decode` and `intern` only ever place existing configurations.
        self.placed.iter().map(|p| Route {
            x: p.x,
            y: p.y,
            index: p.config,
            config: &self.configs[p.config as usize],
        })
    }

    /// Every route as a standalone `ColorConfig`.
    pub fn to_vec(&self) -> Vec<ColorConfig> {
        self.iter().map(|r| r.to_config()).collect()
    }

    /// The bytes of [`crate::image::SECTION_ROUTES`] (see the module documentation).
    pub fn encode(&self) -> Result<Vec<u8>, serde_json::Error> {
        let table = serde_json::to_vec(&self.configs)?;
        let mut out = Vec::with_capacity(4 + table.len() + 2 * self.placed.len());
        out.extend_from_slice(&(table.len() as u32).to_le_bytes());
        out.extend_from_slice(&table);
        let (mut px, mut py) = (0i64, 0i64);
        for p in &self.placed {
            let (dx, dy) = (i64::from(p.x) - px, i64::from(p.y) - py);
            let moved = dx != 0 || dy != 0;
            varint(&mut out, u64::from(p.config) << 1 | u64::from(moved));
            if moved {
                varint(&mut out, zigzag(dx));
                varint(&mut out, zigzag(dy));
            }
            (px, py) = (i64::from(p.x), i64::from(p.y));
        }
        Ok(out)
    }

    /// Decodes [`crate::image::SECTION_ROUTES`]; never panics.
    pub fn decode(data: &[u8]) -> Result<Routes, String> {
        let len = data
            .get(..4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or("truncated table length")? as usize;
        let table = data
            .get(4..4usize.saturating_add(len))
            .ok_or("truncated configuration table")?;
        let configs: Vec<ColorConfig> =
            serde_json::from_slice(table).map_err(|e| format!("configuration table: {e}"))?;
        if configs.iter().any(|c| c.x != 0 || c.y != 0) {
            return Err("a shared configuration names a PE".into());
        }
        let mut index = HashMap::with_capacity(configs.len());
        for (i, c) in configs.iter().enumerate() {
            if index.insert(c.clone(), i as u32).is_some() {
                return Err(format!("configuration {i} is listed twice"));
            }
        }
        if configs.len() <= SMALL {
            index.clear();
        }
        let mut rest = &data[4 + len..];
        let mut placed = Vec::new();
        let (mut x, mut y) = (0i64, 0i64);
        while !rest.is_empty() {
            let h = read_varint(&mut rest)?;
            let config = u32::try_from(h >> 1)
                .ok()
                .filter(|&c| (c as usize) < configs.len())
                .ok_or_else(|| format!("route {} names no configuration", placed.len()))?;
            if h & 1 == 1 {
                x = x.saturating_add(unzigzag(read_varint(&mut rest)?));
                y = y.saturating_add(unzigzag(read_varint(&mut rest)?));
            }
            let (Ok(px), Ok(py)) = (u32::try_from(x), u32::try_from(y)) else {
                return Err(format!("route {} has no valid place", placed.len()));
            };
            placed.push(PlacedRoute {
                x: px,
                y: py,
                config,
            });
        }
        Ok(Routes {
            configs,
            index,
            placed,
        })
    }
}

impl From<Vec<ColorConfig>> for Routes {
    fn from(v: Vec<ColorConfig>) -> Routes {
        v.into_iter().collect()
    }
}

impl FromIterator<ColorConfig> for Routes {
    fn from_iter<I: IntoIterator<Item = ColorConfig>>(iter: I) -> Routes {
        let mut r = Routes::new();
        for c in iter {
            r.push(c);
        }
        r
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(data: &mut &[u8]) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = data.split_first().ok_or("truncated route entry")?;
        *data = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a varint is longer than 64 bits".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::Direction::{East, Ramp, West};

    fn sample() -> Routes {
        let mut r = Routes::new();
        for x in 0..5u32 {
            for y in [3u32, 0, 7] {
                r.push(ColorConfig::route(x, y, 1, vec![Ramp], vec![East]));
                r.push(ColorConfig::route(x, y, 2, vec![West], vec![Ramp]));
            }
        }
        r.push(ColorConfig {
            teardown: true,
            ..ColorConfig::route(70_000, 2, 3, vec![], vec![West, East])
        });
        r
    }

    #[test]
    fn round_trip_and_interning() {
        let r = sample();
        assert_eq!(r.configs().len(), 3);
        assert_eq!(r.len(), 31);
        let back = Routes::decode(&r.encode().unwrap()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.to_vec(), r.to_vec());
        assert_eq!(Routes::from(r.to_vec()), r);
        let last = back.get(30).unwrap();
        assert_eq!(
            (last.x, last.y, last.color, last.teardown),
            (70_000, 2, 3, true)
        );
        let empty = Routes::new();
        assert_eq!(Routes::decode(&empty.encode().unwrap()).unwrap(), empty);
    }

    /// Beyond [`SMALL`] distinct configurations the map finds them.
    #[test]
    fn many_distinct_configurations() {
        let cfg = |i: u16| ColorConfig {
            filter: Some(crate::image::FilterConfig {
                count_data: true,
                init_counter: i,
                ..crate::image::FilterConfig::new(crate::image::FilterKind::Counter)
            }),
            ..ColorConfig::route(u32::from(i), 1, 4, vec![Ramp], vec![East])
        };
        let mut r = Routes::new();
        for round in 0..2 {
            for i in 0..100 {
                r.push(cfg(i));
                assert_eq!(r.intern(&cfg(i)), u32::from(i), "round {round}");
            }
        }
        assert_eq!(r.configs().len(), 100);
        assert_eq!(r.len(), 200);
        let back = Routes::decode(&r.encode().unwrap()).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn malformed_sections_are_errors() {
        let bytes = sample().encode().unwrap();
        for cut in 0..bytes.len() {
            let _ = Routes::decode(&bytes[..cut]);
        }
        assert!(Routes::decode(&[]).is_err());
        assert!(Routes::decode(&[200, 0, 0, 0, b'[']).is_err());
        // An entry naming configuration 9 of 0.
        let mut bad = Routes::new().encode().unwrap();
        bad.push(9 << 1);
        assert!(Routes::decode(&bad).is_err());
        // A move to a negative column.
        let mut bad = Routes::new().encode().unwrap();
        bad.truncate(4);
        let table = br#"[{"x":0,"y":0,"color":1,"rx":[],"tx":[]}]"#;
        bad = [
            (table.len() as u32).to_le_bytes().as_slice(),
            table,
            &[1, 1, 0],
        ]
        .concat();
        assert!(Routes::decode(&bad).is_err());
        // A varint that never ends.
        let mut bad = Routes::new().encode().unwrap();
        bad.extend([0xff; 11]);
        assert!(Routes::decode(&bad).is_err());
    }
}
