//! Module instances: each `@import_module` call (and each program class's root file)
//! creates one [`ModInst`] with its own params, constants, globals and functions.

use super::value::Value;
use crate::ir::{FuncId, GlobalId};
use crate::source::FileId;
use crate::syntax::ast::Ast;
use cranelift_entity::entity_impl;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// A module instance.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ModId(u32);
entity_impl!(ModId, "mod");

/// A top-level declaration of a module instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeclRef {
    /// The instance.
    pub module: ModId,
    /// Index into the file's `Ast::decls`.
    pub index: u32,
}

/// Evaluation state of a constant (for cycle detection and caching).
#[derive(Clone)]
pub enum ConstState {
    /// Being evaluated: a reference now is a cycle.
    InProgress,
    /// Evaluated.
    Done(Value),
    /// Evaluation failed (already reported).
    Failed,
}

/// One instance of a source file.
pub struct ModInst {
    /// The file.
    pub file: FileId,
    /// Its syntax tree.
    pub ast: Rc<Ast>,
    /// Param values bound by the importer (or the layout, or `--params`).
    pub params: BTreeMap<String, Value>,
    /// Top-level names to declaration indices.
    pub names: crate::symbol::SymbolMap<u32>,
    /// Cached constant and param values.
    pub consts: HashMap<u32, ConstState, std::hash::BuildHasherDefault<crate::symbol::WordHasher>>,
    /// Globals created for `var` declarations.
    pub globals: HashMap<u32, GlobalId>,
    /// Runtime functions lowered from `fn` / `task` declarations.
    pub funcs: HashMap<u32, FuncId>,
    /// Instances of generic functions: (declaration, comptime-argument key) to function.
    pub mono: HashMap<(u32, String), FuncId>,
    /// Prefix for qualified names in the image (`""` for the root file).
    pub prefix: String,
    /// Whether the top-level comptime blocks have run.
    pub comptime_ran: bool,
    /// The instance whose `@import_module` call created this one, and that call's span
    /// (`None` for a program class's root), for naming import cycles.
    pub importer: Option<(ModId, crate::source::Span)>,
    /// The params in canonical form (see [`Value::canonical`]), compared to find cycles.
    pub param_key: String,
}
