//! Validating a [`LayoutDesc`] (names, sizes, references) and placing its code regions
//! on the fabric.

use super::*;
use std::collections::HashMap;

/// Checks names, sizes and references.
pub(super) fn check(desc: &LayoutDesc) -> Result<(), SdkLayoutError> {
    let mut names = HashMap::new();
    for (i, r) in desc.regions.iter().enumerate() {
        if names.insert(r.name.as_str(), i).is_some() {
            return invalid(format!("two code regions are named `{}`", r.name));
        }
        if r.width == 0 || r.height == 0 || r.width > 1024 || r.height > 1024 {
            return invalid(format!(
                "code region `{}` is {} x {}: width and height must be 1 to 1024",
                r.name, r.width, r.height
            ));
        }
        let inside = |rect: &RectDesc| {
            rect[0] < rect[2] && rect[1] < rect[3] && rect[2] <= r.width && rect[3] <= r.height
        };
        for prm in &r.params {
            if !inside(&prm.rect) {
                return invalid(format!(
                    "param `{}` of code region `{}` is set on PEs {:?} outside its {} x {} PEs",
                    prm.name, r.name, prm.rect, r.width, r.height
                ));
            }
        }
        for pt in &r.paints {
            if !inside(&pt.rect) {
                return invalid(format!(
                    "color `{}` is painted on PEs {:?} outside code region `{}` ({} x {})",
                    pt.color, pt.rect, r.name, r.width, r.height
                ));
            }
            let all = pt
                .positions
                .iter()
                .chain(pt.edges.iter().flat_map(|e| &e.positions));
            position_count(&pt.positions, || {
                format!(
                    "color `{}` of code region `{}` is painted with",
                    pt.color, r.name
                )
            })?;
            for pos in all {
                if pos.rx.is_empty() || pos.tx.is_empty() {
                    return invalid(format!(
                        "a routing position painted for color `{}` in code region `{}` needs \
                         both inputs and outputs",
                        pt.color, r.name
                    ));
                }
            }
        }
        for s in &r.symbols {
            if s.elem_bytes != 2 && s.elem_bytes != 4 {
                return invalid(format!(
                    "symbol `{}`: elements of {} bytes (2 or 4)",
                    s.name, s.elem_bytes
                ));
            }
            if s.width == 0
                || s.height == 0
                || s.width % r.width != 0
                || s.height % r.height != 0
                || s.data.len() as u64 != u64::from(s.width) * u64::from(s.height)
            {
                return invalid(format!(
                    "symbol `{}` of code region `{}`: a {} x {} matrix of {} elements cannot be \
                     cut into equal blocks for {} x {} PEs",
                    s.name,
                    r.name,
                    s.width,
                    s.height,
                    s.data.len(),
                    r.width,
                    r.height
                ));
            }
        }
    }
    for (i, pt) in desc.ports.iter().enumerate() {
        let Some(r) = desc.regions.get(pt.region) else {
            return invalid(format!(
                "port {i} names code region {} of {}",
                pt.region,
                desc.regions.len()
            ));
        };
        position_count(&pt.positions, || {
            format!(
                "port on color `{}` of code region `{}` has",
                pt.color, r.name
            )
        })?;
        for pos in &pt.positions {
            let own = if pt.input { &pos.tx } else { &pos.rx };
            if own.is_empty() {
                return invalid(format!(
                    "port on color `{}` of code region `{}`: every routing position needs {}",
                    pt.color,
                    r.name,
                    if pt.input { "outputs" } else { "inputs" }
                ));
            }
            if !pt.input && !pos.tx.is_empty() {
                return invalid(format!(
                    "output port on color `{}` of code region `{}` gives output routes; the \
                     compiler chooses them",
                    pt.color, r.name
                ));
            }
        }
    }
    for &(a, b) in &desc.connections {
        let (Some(pa), Some(pb)) = (desc.ports.get(a), desc.ports.get(b)) else {
            return invalid(format!(
                "a connection names port {a} or {b} of {}",
                desc.ports.len()
            ));
        };
        if pa.input || !pb.input {
            return invalid(format!(
                "connect(a, b) needs an output port a and an input port b (colors `{}` and `{}`)",
                pa.color, pb.color
            ));
        }
        if pa.size != pb.size {
            return invalid(format!(
                "connected ports differ in size: `{}` sends {} wavelets, `{}` expects {}",
                pa.color, pa.size, pb.color, pb.size
            ));
        }
    }
    let mut used = vec![0u32; desc.ports.len()];
    for &(a, b) in &desc.connections {
        used[a] += 1;
        used[b] += 1;
    }
    for s in &desc.streams {
        let Some(u) = used.get_mut(s.port) else {
            return invalid(format!(
                "a stream names port {} of {}",
                s.port,
                desc.ports.len()
            ));
        };
        *u += 1;
    }
    if let Some(i) = used.iter().position(|&u| u > 1) {
        return invalid(format!(
            "port on color `{}` is used by {} connections or streams (at most one)",
            desc.ports[i].color, used[i]
        ));
    }
    Ok(())
}

/// A colour has 1 to 4 routing positions on a PE; `what` says whose they are.
fn position_count(
    positions: &[Position],
    what: impl FnOnce() -> String,
) -> Result<(), SdkLayoutError> {
    if positions.is_empty() || positions.len() > 4 {
        let n = positions.len();
        return invalid(format!("{} {n} routing positions (1 to 4)", what()));
    }
    Ok(())
}

/// Places unplaced regions and checks that no two overlap.
pub(super) fn place(desc: &LayoutDesc) -> Result<Vec<(u32, u32)>, SdkLayoutError> {
    let mut boxes: Vec<(u32, u32, u32, u32)> = Vec::new();
    let overlaps = |a: (u32, u32, u32, u32), b: (u32, u32, u32, u32)| {
        a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
    };
    let mut origin = vec![(0, 0); desc.regions.len()];
    for (i, r) in desc.regions.iter().enumerate() {
        if let Some((x, y)) = r.place {
            if x > 2048 || y > 2048 {
                return invalid(format!(
                    "code region `{}` is placed at ({x}, {y}), beyond 2048",
                    r.name
                ));
            }
            let b = (x, y, r.width, r.height);
            if let Some(j) = boxes.iter().position(|&o| overlaps(o, b)) {
                let other = desc.regions.iter().filter(|r| r.place.is_some()).nth(j);
                return invalid(format!(
                    "code region `{}` at ({x}, {y}) overlaps code region `{}`",
                    r.name,
                    other.map_or("?", |o| o.name.as_str())
                ));
            }
            boxes.push(b);
            origin[i] = (x, y);
        }
    }
    for (i, r) in desc.regions.iter().enumerate() {
        if r.place.is_some() {
            continue;
        }
        let mut found = None;
        'search: for y in 0..2048u32 {
            for x in 0..2048u32 {
                // One free PE of margin on every side that has room for it.
                let margin = (
                    x.saturating_sub(1),
                    y.saturating_sub(1),
                    r.width + 1 + u32::from(x > 0),
                    r.height + 1 + u32::from(y > 0),
                );
                if !boxes.iter().any(|&o| overlaps(o, margin)) {
                    found = Some((x, y));
                    break 'search;
                }
            }
        }
        let Some((x, y)) = found else {
            return invalid(format!("no room for code region `{}`", r.name));
        };
        boxes.push((x, y, r.width, r.height));
        origin[i] = (x, y);
    }
    Ok(origin)
}

/// The image rectangle: the regions' bounding box from (0, 0) and two more columns and
/// rows, room for stream proxies and routes.
pub(super) fn rectangle(desc: &LayoutDesc, origin: &[(u32, u32)]) -> (u32, u32) {
    let mut w = 1;
    let mut h = 1;
    for (r, &(x, y)) in desc.regions.iter().zip(origin) {
        w = w.max(x + r.width);
        h = h.max(y + r.height);
    }
    (w + 2, h + 2)
}
