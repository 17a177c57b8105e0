//! Interned names: [`Symbol`], a copyable handle to one distinct identifier or field name.
//!
//! The comptime interpreter looks names up millions of times when a layout places a whole
//! wafer (every `@set_tile_code` and `@set_color_config` call evaluates identifiers and
//! struct literals). Interning every name once, when the parser reads it, makes a name
//! lookup a pointer comparison and a struct field name a copy instead of a heap string.
//!
//! The interner is process-wide: each distinct string is stored once, for the life of the
//! process (a compiler or editor session reads a bounded vocabulary of names), so a
//! [`Symbol`] is a `&'static str` whose address identifies it. Equality and hashing use the
//! address; ordering, display and `Debug` use the text, so a symbol sorts and prints
//! exactly as the `String` it replaces.

use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Mutex, OnceLock};

/// One interned name. Two symbols are equal exactly when their texts are.
#[derive(Clone, Copy)]
pub struct Symbol(&'static str);

fn interner() -> &'static Mutex<HashSet<&'static str>> {
    static SET: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    SET.get_or_init(|| Mutex::new(HashSet::new()))
}

impl Symbol {
    /// The symbol of `text` (stored on first use).
    pub fn intern(text: &str) -> Symbol {
        // A poisoned lock only means another thread panicked while interning; the set
        // itself is always consistent (insertions are single calls).
        let mut set = interner()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&s) = set.get(text) {
            return Symbol(s);
        }
        let s: &'static str = Box::leak(text.to_owned().into_boxed_str());
        set.insert(s);
        Symbol(s)
    }

    /// The text.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl PartialEq for Symbol {
    fn eq(&self, other: &Symbol) -> bool {
        std::ptr::eq(self.0.as_ptr(), other.0.as_ptr()) && self.0.len() == other.0.len()
    }
}

impl Eq for Symbol {}

impl Hash for Symbol {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.as_ptr() as usize);
    }
}

impl PartialOrd for Symbol {
    fn partial_cmp(&self, other: &Symbol) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Symbol {
    fn cmp(&self, other: &Symbol) -> std::cmp::Ordering {
        self.0.cmp(other.0)
    }
}

impl std::ops::Deref for Symbol {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

impl AsRef<str> for Symbol {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.0, f)
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0, f)
    }
}

impl PartialEq<str> for Symbol {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Symbol {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Symbol {
    fn eq(&self, other: &String) -> bool {
        self.0 == other.as_str()
    }
}

impl PartialEq<Symbol> for str {
    fn eq(&self, other: &Symbol) -> bool {
        self == other.0
    }
}

impl PartialEq<Symbol> for &str {
    fn eq(&self, other: &Symbol) -> bool {
        *self == other.0
    }
}

impl PartialEq<Symbol> for String {
    fn eq(&self, other: &Symbol) -> bool {
        self.as_str() == other.0
    }
}

impl From<&str> for Symbol {
    fn from(text: &str) -> Symbol {
        Symbol::intern(text)
    }
}

impl From<&String> for Symbol {
    fn from(text: &String) -> Symbol {
        Symbol::intern(text)
    }
}

impl From<Symbol> for String {
    fn from(s: Symbol) -> String {
        s.0.to_owned()
    }
}

/// A hasher for maps keyed by [`Symbol`] (or other single machine words): one multiply,
/// which spreads an address's bits well enough for a hash table and costs far less than
/// the default keyed hash.
#[derive(Default, Clone, Copy)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
}

/// A hash map keyed by symbols.
pub type SymbolMap<V> = std::collections::HashMap<Symbol, V, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_are_one_symbol() {
        let a = Symbol::intern("east_color_0");
        let b = Symbol::intern(&String::from("east_color_0"));
        let c = Symbol::intern("east_color_1");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, "east_color_0");
        assert_eq!(a.to_string(), "east_color_0");
        assert_eq!(format!("{a:?}"), format!("{:?}", "east_color_0"));
    }

    #[test]
    fn symbols_sort_by_text() {
        // Interned in the opposite order of their texts.
        let z = Symbol::intern("zz_sorting");
        let a = Symbol::intern("aa_sorting");
        let mut v = vec![z, a];
        v.sort();
        assert_eq!(v, vec![a, z]);
    }

    #[test]
    fn symbol_map_finds_by_symbol() {
        let mut m = SymbolMap::default();
        m.insert(Symbol::intern("x_dim"), 1);
        m.insert(Symbol::intern("y_dim"), 2);
        assert_eq!(m.get(&Symbol::intern("y_dim")), Some(&2));
        assert_eq!(m.get(&Symbol::intern("z_dim")), None);
    }
}
