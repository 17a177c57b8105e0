//! Types: the [`Type`] enum, the interner ([`TypeStore`]) that gives each distinct type a
//! [`TypeId`], and the memory layout of runtime types (the one place sizes are computed).

use super::value::Value;
use cranelift_entity::{PrimaryMap, entity_impl};
use csl_arch::NumTy;
use std::collections::HashMap;

/// An interned type.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(u32);
entity_impl!(TypeId, "ty");

/// A CSL type. Types are comptime values; every structurally distinct type is interned once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `void`.
    Void,
    /// `bool`.
    Bool,
    /// Fixed-width integer.
    Int {
        /// Signedness.
        signed: bool,
        /// 8, 16, 32 or 64.
        bits: u8,
    },
    /// `f16`.
    F16,
    /// `f32`.
    F32,
    /// `bf16` (comptime only unless selected).
    Bf16,
    /// `cb16` (comptime only unless selected).
    Cb16,
    /// `comptime_int`.
    ComptimeInt,
    /// `comptime_float`.
    ComptimeFloat,
    /// `comptime_string`.
    ComptimeString,
    /// `comptime_struct`: the supertype of every struct value.
    ComptimeStruct,
    /// `type`.
    Type,
    /// `color`.
    Color,
    /// `direction`.
    Direction,
    /// `data_task_id`.
    DataTaskId,
    /// `local_task_id`.
    LocalTaskId,
    /// `control_task_id`.
    ControlTaskId,
    /// `input_queue`.
    InputQueue,
    /// `output_queue`.
    OutputQueue,
    /// `ut_id`.
    UtId,
    /// `[d0, d1, ...]T`.
    Array {
        /// Element type.
        elem: TypeId,
        /// Extents, outermost first.
        dims: Vec<u64>,
    },
    /// `*T` / `*const T`.
    Ptr {
        /// Pointee.
        elem: TypeId,
        /// Read-only.
        is_const: bool,
    },
    /// `[*]T` / `[*]const T`.
    ManyPtr {
        /// Element.
        elem: TypeId,
        /// Read-only.
        is_const: bool,
    },
    /// `fn(P...) R`.
    Fn {
        /// Parameter types.
        params: Vec<TypeId>,
        /// Return type.
        ret: TypeId,
    },
    /// The type of an anonymous struct literal: field names and types in order.
    AnonStruct(Vec<(crate::symbol::Symbol, TypeId)>),
    /// The type of `@import_module`.
    Module,
    /// The type of `@range(T, ...)`.
    Range(TypeId),
    /// The type of a task name used as a value.
    Task,
    /// `mem1d_dsd`.
    Mem1dDsd,
    /// `mem4d_dsd`.
    Mem4dDsd,
    /// `fabin_dsd`.
    FabinDsd,
    /// `fabout_dsd`.
    FaboutDsd,
    /// The type of `@allocate_fifo` (a FIFO descriptor).
    Fifo,
    /// An explicit DSR handle: 0 `dsr_dest`, 1 `dsr_src0`, 2 `dsr_src1`, 3 `dsr_fifo_dest`,
    /// 4 `dsr_fifo_src1`.
    Dsr(u8),
    /// An extended DSR handle (`xdsr`).
    Xdsr,
    /// A named (nominal) struct type: index into [`TypeStore`]'s struct definitions.
    Struct(u32),
    /// An enum type: index into [`TypeStore`]'s enum definitions.
    Enum(u32),
}

impl Type {
    /// Whether values of this type are data structure descriptors (held in memory as a
    /// [`csl_arch::dsd`] descriptor; at runtime a value is the descriptor's address).
    pub fn is_dsd(&self) -> bool {
        matches!(
            self,
            Type::Mem1dDsd
                | Type::Mem4dDsd
                | Type::FabinDsd
                | Type::FaboutDsd
                | Type::Fifo
                | Type::Dsr(_)
        )
    }

    /// Whether values of this type are 16-bit ids: colours, task ids, queues and
    /// microthread ids (`@as` takes them as u16 numbers).
    pub fn is_id(&self) -> bool {
        matches!(
            self,
            Type::Color
                | Type::DataTaskId
                | Type::LocalTaskId
                | Type::ControlTaskId
                | Type::InputQueue
                | Type::OutputQueue
                | Type::UtId
        )
    }
}

/// The definition of a named struct type.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// The name it was bound to (`S`, `Pair(i16)`), or `None` while anonymous.
    pub name: Option<String>,
    /// Fields in declaration order.
    pub fields: Vec<(String, TypeId)>,
    /// Default values, one per field.
    pub defaults: Vec<Option<Value>>,
}

/// The definition of an enum type.
#[derive(Clone, Debug)]
pub struct EnumDef {
    /// The name it was bound to, or `None` while anonymous.
    pub name: Option<String>,
    /// The backing integer type.
    pub tag: TypeId,
    /// Members in declaration order with their values.
    pub members: Vec<(String, i128)>,
}

/// Byte offsets of a struct's fields, its size and its alignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    /// Offset of each field.
    pub offsets: Vec<u64>,
    /// Size (a multiple of the alignment, so arrays of the struct stay aligned).
    pub size: u64,
    /// Alignment: the largest field alignment.
    pub align: u64,
}

/// Spellings of the DSR handle types, by [`Type::Dsr`] kind.
pub const DSR_NAMES: [&str; 5] = [
    "dsr_dest",
    "dsr_src0",
    "dsr_src1",
    "dsr_fifo_dest",
    "dsr_fifo_src1",
];

/// The interner.
pub struct TypeStore {
    types: PrimaryMap<TypeId, Type>,
    map: HashMap<Type, TypeId>,
    structs: Vec<StructDef>,
    enums: Vec<EnumDef>,
    /// Struct and enum types by definition key (definition site and structure).
    nominal: HashMap<String, TypeId>,
    /// Frequently used types.
    pub common: Common,
}

/// Pre-interned types.
#[allow(missing_docs)]
pub struct Common {
    pub void: TypeId,
    pub bool_: TypeId,
    pub i8: TypeId,
    pub u8: TypeId,
    pub i16: TypeId,
    pub u16: TypeId,
    pub i32: TypeId,
    pub u32: TypeId,
    pub i64: TypeId,
    pub u64: TypeId,
    pub f16: TypeId,
    pub f32: TypeId,
    pub comptime_int: TypeId,
    pub comptime_float: TypeId,
    pub comptime_string: TypeId,
    pub comptime_struct: TypeId,
    pub type_: TypeId,
    pub color: TypeId,
    pub direction: TypeId,
    pub module: TypeId,
    pub task: TypeId,
    pub local_task_id: TypeId,
    pub data_task_id: TypeId,
    pub control_task_id: TypeId,
}

impl Default for TypeStore {
    fn default() -> Self {
        Self::new()
    }
}

impl TypeStore {
    /// A store with the common types interned.
    pub fn new() -> TypeStore {
        let mut types = PrimaryMap::new();
        let mut map = HashMap::new();
        let mut add = |t: Type| {
            let id = types.push(t.clone());
            map.insert(t, id);
            id
        };
        let int = |signed, bits| Type::Int { signed, bits };
        let common = Common {
            void: add(Type::Void),
            bool_: add(Type::Bool),
            i8: add(int(true, 8)),
            u8: add(int(false, 8)),
            i16: add(int(true, 16)),
            u16: add(int(false, 16)),
            i32: add(int(true, 32)),
            u32: add(int(false, 32)),
            i64: add(int(true, 64)),
            u64: add(int(false, 64)),
            f16: add(Type::F16),
            f32: add(Type::F32),
            comptime_int: add(Type::ComptimeInt),
            comptime_float: add(Type::ComptimeFloat),
            comptime_string: add(Type::ComptimeString),
            comptime_struct: add(Type::ComptimeStruct),
            type_: add(Type::Type),
            color: add(Type::Color),
            direction: add(Type::Direction),
            module: add(Type::Module),
            task: add(Type::Task),
            local_task_id: add(Type::LocalTaskId),
            data_task_id: add(Type::DataTaskId),
            control_task_id: add(Type::ControlTaskId),
        };
        TypeStore {
            types,
            map,
            structs: Vec::new(),
            enums: Vec::new(),
            nominal: HashMap::new(),
            common,
        }
    }

    /// The struct type defined at `key` (a definition site plus the resolved structure),
    /// created on first use: two evaluations of one definition with the same field types
    /// and defaults are the same type; any other struct is a different type.
    pub fn struct_type(
        &mut self,
        key: String,
        fields: Vec<(String, TypeId)>,
        defaults: Vec<Option<Value>>,
    ) -> TypeId {
        if let Some(&t) = self.nominal.get(&key) {
            return t;
        }
        let idx = self.structs.len() as u32;
        self.structs.push(StructDef {
            name: None,
            fields,
            defaults,
        });
        let t = self.types.push(Type::Struct(idx));
        self.nominal.insert(key, t);
        t
    }

    /// The enum type defined at `key` (see [`TypeStore::struct_type`]).
    pub fn enum_type(&mut self, key: String, tag: TypeId, members: Vec<(String, i128)>) -> TypeId {
        if let Some(&t) = self.nominal.get(&key) {
            return t;
        }
        let idx = self.enums.len() as u32;
        self.enums.push(EnumDef {
            name: None,
            tag,
            members,
        });
        let t = self.types.push(Type::Enum(idx));
        self.nominal.insert(key, t);
        t
    }

    /// The definition of a struct type.
    pub fn struct_def(&self, id: TypeId) -> Option<&StructDef> {
        match self.get(id) {
            Type::Struct(i) => self.structs.get(*i as usize),
            _ => None,
        }
    }

    /// The definition of an enum type.
    pub fn enum_def(&self, id: TypeId) -> Option<&EnumDef> {
        match self.get(id) {
            Type::Enum(i) => self.enums.get(*i as usize),
            _ => None,
        }
    }

    /// Gives an anonymous struct or enum type the name it is first bound to.
    pub fn name_type(&mut self, id: TypeId, name: &str) {
        match *self.get(id) {
            Type::Struct(i) => {
                if let Some(d) = self.structs.get_mut(i as usize)
                    && d.name.is_none()
                {
                    d.name = Some(name.to_string());
                }
            }
            Type::Enum(i) => {
                if let Some(d) = self.enums.get_mut(i as usize)
                    && d.name.is_none()
                {
                    d.name = Some(name.to_string());
                }
            }
            _ => {}
        }
    }

    /// The memory layout of a named or anonymous struct type: fields in declaration
    /// order, each at its alignment. This and [`TypeStore::size_of`] are the only places
    /// that compute layouts.
    pub fn struct_layout(&self, id: TypeId) -> Option<StructLayout> {
        let fields: Vec<TypeId> = match self.get(id) {
            Type::Struct(i) => self
                .structs
                .get(*i as usize)?
                .fields
                .iter()
                .map(|(_, t)| *t)
                .collect(),
            Type::AnonStruct(f) => f.iter().map(|(_, t)| *t).collect(),
            _ => return None,
        };
        let mut offsets = Vec::with_capacity(fields.len());
        let mut size: u64 = 0;
        let mut align: u64 = 1;
        for t in fields {
            let a = self.align_of(t)?;
            size = size.div_ceil(a) * a;
            offsets.push(size);
            size = size.checked_add(self.size_of(t)?)?;
            align = align.max(a);
        }
        Some(StructLayout {
            offsets,
            size: size.div_ceil(align) * align,
            align,
        })
    }

    /// Whether runtime values of this type live in memory (arrays, structs, descriptors):
    /// such a value is handled through its address.
    pub fn is_mem_type(&self, id: TypeId) -> bool {
        let t = self.get(id);
        matches!(t, Type::Array { .. } | Type::Struct(_)) || t.is_dsd()
    }

    /// The interned type `*T` (`*const T` when `is_const`).
    pub fn ptr(&mut self, elem: TypeId, is_const: bool) -> TypeId {
        self.intern(Type::Ptr { elem, is_const })
    }

    /// Interns a type.
    pub fn intern(&mut self, t: Type) -> TypeId {
        if let Some(&id) = self.map.get(&t) {
            return id;
        }
        let id = self.types.push(t.clone());
        self.map.insert(t, id);
        id
    }

    /// The type behind an id.
    pub fn get(&self, id: TypeId) -> &Type {
        &self.types[id]
    }

    /// Looks up a builtin type name (`i16`, `f32`, `color`, ...).
    pub fn builtin_named(&mut self, name: &str) -> Option<TypeId> {
        let c = &self.common;
        Some(match name {
            "void" => c.void,
            "bool" => c.bool_,
            "i8" => c.i8,
            "u8" => c.u8,
            "i16" => c.i16,
            "u16" => c.u16,
            "i32" => c.i32,
            "u32" => c.u32,
            "i64" => c.i64,
            "u64" => c.u64,
            "f16" => c.f16,
            "f32" => c.f32,
            "comptime_int" => c.comptime_int,
            "comptime_float" => c.comptime_float,
            "comptime_string" => c.comptime_string,
            "comptime_struct" => c.comptime_struct,
            "imported_module" => c.module,
            "type" => c.type_,
            "color" => c.color,
            "direction" => c.direction,
            "local_task_id" => c.local_task_id,
            "data_task_id" => c.data_task_id,
            "control_task_id" => c.control_task_id,
            "bf16" => return Some(self.intern(Type::Bf16)),
            "cb16" => return Some(self.intern(Type::Cb16)),
            "input_queue" => return Some(self.intern(Type::InputQueue)),
            "output_queue" => return Some(self.intern(Type::OutputQueue)),
            "ut_id" => return Some(self.intern(Type::UtId)),
            "mem1d_dsd" => return Some(self.intern(Type::Mem1dDsd)),
            "mem4d_dsd" => return Some(self.intern(Type::Mem4dDsd)),
            "fabin_dsd" => return Some(self.intern(Type::FabinDsd)),
            "fabout_dsd" => return Some(self.intern(Type::FaboutDsd)),
            "dsr_dest" => return Some(self.intern(Type::Dsr(0))),
            "dsr_src0" => return Some(self.intern(Type::Dsr(1))),
            "dsr_src1" => return Some(self.intern(Type::Dsr(2))),
            "dsr_fifo_dest" => return Some(self.intern(Type::Dsr(3))),
            "dsr_fifo_src1" => return Some(self.intern(Type::Dsr(4))),
            "xdsr" => return Some(self.intern(Type::Xdsr)),
            _ => return None,
        })
    }

    /// Whether values of this type exist only at compile time.
    pub fn is_comptime_only(&self, id: TypeId) -> bool {
        match self.get(id) {
            Type::ComptimeInt
            | Type::ComptimeFloat
            | Type::ComptimeString
            | Type::ComptimeStruct
            | Type::Type
            | Type::Fn { .. }
            | Type::AnonStruct(_)
            | Type::Module
            | Type::Range(_)
            | Type::Task => true,
            Type::Array { elem, .. } | Type::Ptr { elem, .. } | Type::ManyPtr { elem, .. } => {
                !matches!(self.get(*elem), Type::Fn { .. }) && self.is_comptime_only(*elem)
            }
            Type::Struct(i) => self
                .structs
                .get(*i as usize)
                .is_none_or(|d| d.fields.iter().any(|(_, t)| self.is_comptime_only(*t))),
            _ => false,
        }
    }

    /// Whether the type is an integer (fixed or comptime).
    pub fn is_int(&self, id: TypeId) -> bool {
        matches!(self.get(id), Type::Int { .. } | Type::ComptimeInt)
    }

    /// Whether the type is a float (fixed or comptime).
    pub fn is_float(&self, id: TypeId) -> bool {
        matches!(
            self.get(id),
            Type::F16 | Type::F32 | Type::Bf16 | Type::Cb16 | Type::ComptimeFloat
        )
    }

    /// Whether the type is numeric.
    pub fn is_numeric(&self, id: TypeId) -> bool {
        self.is_int(id) || self.is_float(id)
    }

    /// The machine scalar a runtime value of this type is held as, if it is a scalar.
    pub fn num_ty(&self, id: TypeId) -> Option<NumTy> {
        Some(match self.get(id) {
            Type::Bool => NumTy::Bool,
            Type::Int { signed, bits } => match (*signed, *bits) {
                (true, 8) => NumTy::I8,
                (false, 8) => NumTy::U8,
                (true, 16) => NumTy::I16,
                (false, 16) => NumTy::U16,
                (true, 32) => NumTy::I32,
                (false, 32) => NumTy::U32,
                _ => return None,
            },
            Type::F16 => NumTy::F16,
            Type::F32 => NumTy::F32,
            t if t.is_id() => NumTy::U16,
            Type::Direction | Type::Ptr { .. } | Type::ManyPtr { .. } => NumTy::U16,
            Type::Enum(_) => return self.enum_def(id).and_then(|d| self.num_ty(d.tag)),
            _ => return None,
        })
    }

    /// Size in bytes of a runtime value of this type in PE memory.
    pub fn size_of(&self, id: TypeId) -> Option<u64> {
        match self.get(id) {
            Type::Array { elem, dims } => {
                let n = dims.iter().try_fold(1u64, |a, d| a.checked_mul(*d))?;
                n.checked_mul(self.size_of(*elem)?)
            }
            Type::AnonStruct(_) | Type::Struct(_) => self.struct_layout(id).map(|l| l.size),
            t if t.is_dsd() => Some(u64::from(csl_arch::dsd::DESC_BYTES)),
            _ => self.num_ty(id).map(|n| u64::from(n.size())),
        }
    }

    /// Alignment in bytes (32-bit scalars at 4, 16-bit at 2).
    pub fn align_of(&self, id: TypeId) -> Option<u64> {
        match self.get(id) {
            Type::Array { elem, .. } => self.align_of(*elem),
            Type::AnonStruct(_) | Type::Struct(_) => self.struct_layout(id).map(|l| l.align),
            t if t.is_dsd() => Some(2),
            _ => self.num_ty(id).map(|n| u64::from(n.size().max(1))),
        }
    }

    /// Renders a type the way CSL spells it.
    pub fn display(&self, id: TypeId) -> String {
        let t = self.get(id);
        match t {
            Type::Void => "void".into(),
            Type::Bool => "bool".into(),
            Type::Int { signed, bits } => format!("{}{bits}", if *signed { "i" } else { "u" }),
            Type::F16 => "f16".into(),
            Type::F32 => "f32".into(),
            Type::Bf16 => "bf16".into(),
            Type::Cb16 => "cb16".into(),
            Type::ComptimeInt => "comptime_int".into(),
            Type::ComptimeFloat => "comptime_float".into(),
            Type::ComptimeString => "comptime_string".into(),
            Type::ComptimeStruct => "comptime_struct".into(),
            Type::Type => "type".into(),
            Type::Color => "color".into(),
            Type::Direction => "direction".into(),
            Type::DataTaskId => "data_task_id".into(),
            Type::LocalTaskId => "local_task_id".into(),
            Type::ControlTaskId => "control_task_id".into(),
            Type::InputQueue => "input_queue".into(),
            Type::OutputQueue => "output_queue".into(),
            Type::UtId => "ut_id".into(),
            Type::Array { elem, dims } => {
                let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
                format!("[{}]{}", d.join(", "), self.display(*elem))
            }
            Type::Ptr { elem, is_const } | Type::ManyPtr { elem, is_const } => {
                let many = if matches!(t, Type::ManyPtr { .. }) {
                    "[*]"
                } else {
                    "*"
                };
                let c = if *is_const { "const " } else { "" };
                format!("{many}{c}{}", self.display(*elem))
            }
            Type::Fn { params, ret } => {
                let p: Vec<String> = params.iter().map(|p| self.display(*p)).collect();
                format!("fn({}) {}", p.join(", "), self.display(*ret))
            }
            Type::AnonStruct(fields) => {
                let f = show_fields(fields, |t| self.display(*t), |n, t| format!("{n}: {t}"));
                format!("struct {{ {} }}", f.join(", "))
            }
            Type::Module => "imported_module".into(),
            Type::Range(t) => format!("range({})", self.display(*t)),
            Type::Task => "task".into(),
            Type::Mem1dDsd => "mem1d_dsd".into(),
            Type::Mem4dDsd => "mem4d_dsd".into(),
            Type::FabinDsd => "fabin_dsd".into(),
            Type::FaboutDsd => "fabout_dsd".into(),
            Type::Fifo => "fifo".into(),
            Type::Dsr(k) => DSR_NAMES.get(*k as usize).copied().unwrap_or("dsr").into(),
            Type::Xdsr => "xdsr".into(),
            Type::Struct(i) => match self.structs.get(*i as usize) {
                Some(StructDef { name: Some(n), .. }) => n.clone(),
                Some(d) => {
                    let f: Vec<String> = d
                        .fields
                        .iter()
                        .map(|(n, t)| format!("{n}: {}", self.display(*t)))
                        .collect();
                    format!("struct {{ {} }}", f.join(", "))
                }
                None => "struct".into(),
            },
            Type::Enum(i) => match self.enums.get(*i as usize) {
                Some(EnumDef { name: Some(n), .. }) => n.clone(),
                Some(d) => format!("enum({})", self.display(d.tag)),
                None => "enum".into(),
            },
        }
    }

    /// Bit width and signedness of a fixed-width integer type.
    pub fn int_info(&self, id: TypeId) -> Option<(bool, u8)> {
        match self.get(id) {
            Type::Int { signed, bits } => Some((*signed, *bits)),
            _ => None,
        }
    }

    /// Whether `v` fits in the fixed integer type `id`.
    pub fn int_fits(&self, id: TypeId, v: i128) -> bool {
        match self.int_info(id) {
            Some((true, bits)) => {
                let half = 1i128 << (bits - 1);
                (-half..half).contains(&v)
            }
            Some((false, bits)) => (0..(1i128 << bits)).contains(&v),
            None => true,
        }
    }
}

/// The entries of a struct's fields, each shown by `show`: bare for a tuple (fields named
/// `0`, `1`, ...), otherwise as `named(name, shown)`.
pub(crate) fn show_fields<T>(
    fields: &[(crate::symbol::Symbol, T)],
    show: impl Fn(&T) -> String,
    named: impl Fn(&crate::symbol::Symbol, String) -> String,
) -> Vec<String> {
    let tuple = fields
        .iter()
        .enumerate()
        .all(|(i, (n, _))| *n == i.to_string());
    let entry =
        |(n, v): &(crate::symbol::Symbol, T)| if tuple { show(v) } else { named(n, show(v)) };
    fields.iter().map(entry).collect()
}
