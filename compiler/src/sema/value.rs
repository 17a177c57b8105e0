//! Comptime values: what the comptime interpreter computes and what runtime code reads as
//! constants.

use super::types::{Type, TypeId, TypeStore};
use crate::ir::GlobalId;
use crate::sema::module::{DeclRef, ModId};
use csl_arch::fabric::Direction;
use num_bigint::BigInt;
use std::rc::Rc;

/// The kind of a task-id handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TaskIdKind {
    /// `local_task_id`.
    Local,
    /// `data_task_id`.
    Data,
    /// `control_task_id`.
    Control,
}

/// A value known at compile time.
#[derive(Clone, Debug)]
pub enum Value {
    /// `{}`.
    Void,
    /// `true` / `false`.
    Bool(bool),
    /// An integer of the given type (`comptime_int` or fixed).
    Int(i128, TypeId),
    /// A `comptime_int` outside the 128-bit range of [`Value::Int`] (see [`Value::comptime_int`]):
    /// comptime integers are exact, whatever their size.
    BigInt(Rc<BigInt>),
    /// A float of the given type (`comptime_float`, `f16` or `f32`).
    Float(f64, TypeId),
    /// A `comptime_string`.
    Str(Rc<str>),
    /// A type.
    Type(TypeId),
    /// An anonymous struct or tuple (tuples have fields `0`, `1`, ...).
    Struct(Rc<Vec<(crate::symbol::Symbol, Value)>>),
    /// An array: the array type and its elements, flattened row-major.
    Array(TypeId, Rc<Vec<Value>>),
    /// An imported module instance.
    Module(ModId),
    /// A function declaration.
    Func(DeclRef),
    /// A task declaration.
    Task(DeclRef),
    /// A colour id.
    Color(u8),
    /// A direction.
    Dir(Direction),
    /// A task-id handle.
    TaskId(TaskIdKind, u8),
    /// A queue handle (`true` = input queue).
    Queue(bool, u8),
    /// A `@range`.
    Range {
        /// First value.
        start: i128,
        /// End (exclusive).
        stop: i128,
        /// Step (non-zero).
        step: i128,
        /// Element type.
        elem: TypeId,
    },
    /// A pointer to (into) a global of the program being compiled.
    GlobalPtr {
        /// The global.
        global: GlobalId,
        /// Byte offset.
        offset: u32,
        /// The pointer type.
        ty: TypeId,
    },
    /// A pointer to a fixed address (memory-mapped registers).
    AbsPtr {
        /// Byte address.
        addr: u32,
        /// The pointer type.
        ty: TypeId,
    },
    /// A data structure descriptor known at comptime (its type is one of the DSD types).
    Dsd(Rc<super::dsd::DsdVal>),
    /// An explicit DSR handle (`@get_dsr`): its kind (see [`Type::Dsr`]) and number. Its
    /// descriptor lives in a per-program memory slot.
    Dsr(u8, u8),
    /// An extended DSR handle (`@get_xdsr`).
    Xdsr(u8),
    /// A value of a named struct type: field values in declaration order.
    Record(TypeId, Rc<Vec<Value>>),
    /// A member of an enum type, by value.
    Enum(TypeId, i128),
}

impl Value {
    /// The function this value names, if it is one.
    pub fn into_func(self) -> Option<DeclRef> {
        match self {
            Value::Func(d) => Some(d),
            _ => None,
        }
    }

    /// A `comptime_int` of any size: [`Value::Int`] when it fits in `i128`, else
    /// [`Value::BigInt`].
    pub fn comptime_int(v: BigInt, ty: TypeId) -> Value {
        match i128::try_from(&v) {
            Ok(i) => Value::Int(i, ty),
            Err(_) => Value::BigInt(Rc::new(v)),
        }
    }

    /// An integer value (either representation) as a big integer.
    pub fn as_bigint(&self) -> Option<BigInt> {
        match self {
            Value::Int(i, _) => Some(BigInt::from(*i)),
            Value::BigInt(b) => Some((**b).clone()),
            _ => None,
        }
    }

    /// The value's type.
    pub fn ty(&self, types: &mut TypeStore) -> TypeId {
        let c = &types.common;
        match self {
            Value::Void => c.void,
            Value::Bool(_) => c.bool_,
            Value::Int(_, t) | Value::Float(_, t) => *t,
            Value::BigInt(_) => c.comptime_int,
            Value::Str(_) => c.comptime_string,
            Value::Type(_) => c.type_,
            Value::Struct(fields) => {
                let fields = fields.clone();
                let ft = fields.iter().map(|(n, v)| (*n, v.ty(types))).collect();
                types.intern(Type::AnonStruct(ft))
            }
            Value::Array(t, _) => *t,
            Value::Module(_) => c.module,
            Value::Func(_) | Value::Task(_) => c.task,
            Value::Color(_) => c.color,
            Value::Dir(_) => c.direction,
            Value::TaskId(TaskIdKind::Local, _) => c.local_task_id,
            Value::TaskId(TaskIdKind::Data, _) => c.data_task_id,
            Value::TaskId(TaskIdKind::Control, _) => c.control_task_id,
            Value::Queue(true, _) => types.intern(Type::InputQueue),
            Value::Queue(false, _) => types.intern(Type::OutputQueue),
            Value::Range { elem, .. } => types.intern(Type::Range(*elem)),
            Value::GlobalPtr { ty, .. } | Value::AbsPtr { ty, .. } => *ty,
            Value::Dsd(d) => d.ty,
            Value::Dsr(k, _) => types.intern(Type::Dsr(*k)),
            Value::Xdsr(_) => types.intern(Type::Xdsr),
            Value::Record(t, _) | Value::Enum(t, _) => *t,
        }
    }

    /// A canonical text form, used to decide whether two PEs share one program class.
    pub fn canonical(&self, types: &TypeStore) -> String {
        let mut out = String::new();
        self.write_canonical(types, &mut out);
        out
    }

    /// Appends [`Value::canonical`] to `out` (one buffer for a whole nested value: the
    /// layout keys every PE's params this way).
    pub fn write_canonical(&self, types: &TypeStore, out: &mut String) {
        use std::fmt::Write;
        // Writing into a String cannot fail.
        let _ = match self {
            Value::Void => write!(out, "{{}}"),
            Value::Bool(b) => write!(out, "{b}"),
            Value::Int(v, t) => write!(out, "{v}:{}", types.display(*t)),
            Value::BigInt(v) => write!(out, "{v}:comptime_int"),
            Value::Float(v, t) => write!(out, "{:?}:{}", v, types.display(*t)),
            Value::Str(s) => write!(out, "{s:?}"),
            Value::Type(t) => write!(out, "{}", types.display(*t)),
            Value::Struct(fields) => {
                out.push_str(".{");
                for (i, (n, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push('.');
                    out.push_str(n);
                    out.push('=');
                    v.write_canonical(types, out);
                }
                write!(out, "}}")
            }
            Value::Array(t, elems) => {
                let _ = write!(out, "{}{{", types.display(*t));
                Self::write_list(elems, types, out);
                write!(out, "}}")
            }
            Value::Module(m) => write!(out, "module#{}", m.as_u32()),
            Value::Func(d) => write!(out, "fn#{}.{}", d.module.as_u32(), d.index),
            Value::Task(d) => write!(out, "task#{}.{}", d.module.as_u32(), d.index),
            Value::Color(c) => write!(out, "color({c})"),
            Value::Dir(d) => write!(out, "{}", d.name()),
            Value::TaskId(k, n) => write!(out, "{k:?}_task_id({n})"),
            Value::Queue(i, n) => {
                let kind = if *i { "input_queue" } else { "output_queue" };
                write!(out, "{kind}({n})")
            }
            Value::Range {
                start,
                stop,
                step,
                elem,
            } => write!(out, "range({},{start},{stop},{step})", types.display(*elem)),
            Value::GlobalPtr { global, offset, .. } => {
                write!(out, "&g{}+{offset}", global.as_u32())
            }
            Value::AbsPtr { addr, .. } => write!(out, "@0x{addr:x}"),
            Value::Dsd(d) => write!(out, "{d:?}"),
            Value::Dsr(k, n) => write!(out, "dsr({k},{n})"),
            Value::Xdsr(n) => write!(out, "xdsr({n})"),
            Value::Record(t, fields) => {
                let index = cranelift_entity::EntityRef::index(*t);
                let _ = write!(out, "{}#{index}{{", types.display(*t));
                Self::write_list(fields, types, out);
                write!(out, "}}")
            }
            Value::Enum(t, v) => write!(
                out,
                "{}#{}({v})",
                types.display(*t),
                cranelift_entity::EntityRef::index(*t)
            ),
        };
    }

    /// Comma-separated canonical forms.
    fn write_list(values: &[Value], types: &TypeStore, out: &mut String) {
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            v.write_canonical(types, out);
        }
    }

    /// A short human description for messages, e.g. `42` or `"abc"`.
    pub fn describe(&self, types: &TypeStore) -> String {
        match self {
            Value::Int(v, _) => v.to_string(),
            Value::BigInt(v) => v.to_string(),
            Value::Float(v, _) => format!("{v}"),
            Value::Bool(b) => b.to_string(),
            Value::Str(s) => format!("{s:?}"),
            Value::Type(t) => types.display(*t),
            Value::Enum(t, v) => match types
                .enum_def(*t)
                .and_then(|d| d.members.iter().find(|m| m.1 == *v))
            {
                Some((name, _)) => format!("{}.{name}", types.display(*t)),
                None => format!("@as({}, {v})", types.display(*t)),
            },
            Value::Record(t, fields) => {
                let names = types
                    .struct_def(*t)
                    .map(|d| d.fields.clone())
                    .unwrap_or_default();
                let f: Vec<String> = fields
                    .iter()
                    .zip(names)
                    .map(|(v, (n, _))| format!(".{n} = {}", v.describe(types)))
                    .collect();
                format!("{}{{ {} }}", types.display(*t), f.join(", "))
            }
            Value::Struct(fields) => {
                let show = |v: &Value| v.describe(types);
                let f = super::types::show_fields(fields, show, |n, v| format!(".{n} = {v}"));
                if f.is_empty() {
                    ".{}".to_string()
                } else {
                    format!(".{{ {} }}", f.join(", "))
                }
            }
            Value::Array(t, elems) => {
                let f: Vec<String> = elems.iter().map(|v| v.describe(types)).collect();
                format!("{}{{ {} }}", types.display(*t), f.join(", "))
            }
            _ => self.canonical(types),
        }
    }
}

trait AsU32 {
    fn as_u32(&self) -> u32;
}
impl AsU32 for ModId {
    fn as_u32(&self) -> u32 {
        cranelift_entity::EntityRef::index(*self) as u32
    }
}
impl AsU32 for GlobalId {
    fn as_u32(&self) -> u32 {
        cranelift_entity::EntityRef::index(*self) as u32
    }
}
