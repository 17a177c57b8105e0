//! The registry of diagnostic codes. Each code is defined once here, with a one-line
//! description; a tidy test checks that every code has at least one test case.
//!
//! Ranges: E00xx lexing and parsing, E01xx names and modules, E02xx types and
//! expressions, E03xx comptime evaluation, E04xx layout, E05xx tasks and builtins,
//! E06xx code generation and memory, E09xx command line.

macro_rules! codes {
    ($( $(#[doc = $doc:literal])* $name:ident = $code:literal; )*) => {
        $( $(#[doc = $doc])* pub const $name: &str = $code; )*
        /// Every code with its description, in order.
        pub const ALL: &[(&str, &str)] = &[ $( ($code, concat!($($doc),*)) ),* ];
    };
}

codes! {
    /// A character that starts no token.
    STRAY_CHAR = "E0001";
    /// A string or character literal without its closing quote.
    UNTERMINATED_STRING = "E0002";
    /// A malformed number literal.
    BAD_NUMBER = "E0003";
    /// An unexpected token.
    UNEXPECTED_TOKEN = "E0004";
    /// The file ended in the middle of a construct.
    UNEXPECTED_EOF = "E0005";
    /// An opening bracket without its closing one, or the reverse.
    UNBALANCED = "E0006";
    /// A bad escape sequence in a literal.
    BAD_ESCAPE = "E0007";
    /// A name that is not declared.
    UNDEFINED_NAME = "E0101";
    /// A name declared twice in one scope.
    DUPLICATE_DECL = "E0102";
    /// A module file that cannot be found or read.
    MODULE_NOT_FOUND = "E0103";
    /// A member that a module or struct does not have.
    UNKNOWN_MEMBER = "E0104";
    /// A builtin that does not exist.
    UNKNOWN_BUILTIN = "E0105";
    /// A declaration that depends on itself.
    CYCLIC_DECL = "E0106";
    /// A param with no value and no default, used.
    UNBOUND_PARAM = "E0107";
    /// A param given to a module that declares no such param (a warning).
    UNKNOWN_PARAM = "E0108";
    /// A module that imports itself, directly or through other modules, with the same
    /// params.
    IMPORT_CYCLE = "E0109";
    /// More module instances than `--max-module-instances` allows.
    TOO_MANY_MODULES = "E0110";
    /// Operand types do not match.
    TYPE_MISMATCH = "E0201";
    /// A call with the wrong number of arguments.
    ARG_COUNT = "E0202";
    /// Assignment to a constant.
    ASSIGN_TO_CONST = "E0203";
    /// A value outside the range of its type.
    OUT_OF_RANGE = "E0204";
    /// An operator applied to an operand type it does not accept.
    BAD_OPERAND = "E0205";
    /// A value used where a type is needed, or the reverse.
    NOT_A_TYPE = "E0206";
    /// Calling something that is not a function.
    NOT_CALLABLE = "E0207";
    /// A return statement that does not match the function's return type.
    BAD_RETURN = "E0208";
    /// `break` or `continue` outside a loop.
    BREAK_OUTSIDE_LOOP = "E0209";
    /// A `switch` that does not cover every value.
    NON_EXHAUSTIVE = "E0213";
    /// Something the compiler does not support yet.
    UNSUPPORTED = "E0210";
    /// Indexing a value that is not an array or pointer.
    NOT_INDEXABLE = "E0211";
    /// Dereferencing a value that is not a pointer.
    NOT_A_POINTER = "E0212";
    /// A `switch` case value that another case already covers.
    DUPLICATE_CASE = "E0214";
    /// A struct literal that leaves a field without a default unset.
    MISSING_FIELD = "E0215";
    /// Two members of an enum with the same value.
    DUPLICATE_ENUM_VALUE = "E0216";
    /// A tensor access expression that is not an affine index into an array.
    BAD_TENSOR_ACCESS = "E0217";
    /// A value that must be known at compile time is not.
    NOT_COMPTIME = "E0301";
    /// Comptime evaluation took too long.
    COMPTIME_FUEL = "E0302";
    /// `@comptime_assert` failed.
    COMPTIME_ASSERT = "E0303";
    /// Division by zero at comptime.
    COMPTIME_DIV_ZERO = "E0304";
    /// Index out of range at comptime.
    COMPTIME_INDEX = "E0305";
    /// A `comptime_int` value beyond the 128-bit range the compiler computes exactly.
    COMPTIME_INT_RANGE = "E0306";
    /// Expressions or statements nested deeper than `--max-nesting-depth`, or analysis
    /// nested deeper than its stack allows.
    TOO_DEEP = "E0307";
    /// The top-level file has no layout block, or more than one.
    LAYOUT_MISSING = "E0401";
    /// `@set_rectangle` called twice, or not before `@set_tile_code`.
    LAYOUT_RECTANGLE = "E0402";
    /// `@set_tile_code` outside the rectangle or twice for one PE.
    LAYOUT_TILE = "E0403";
    /// A PE of the rectangle has no code.
    LAYOUT_NO_CODE = "E0404";
    /// The rectangle does not fit the fabric.
    LAYOUT_FABRIC = "E0405";
    /// A builtin used where it is not allowed (layout-only, comptime-only, ...).
    BUILTIN_CONTEXT = "E0501";
    /// A builtin given the wrong number or kind of arguments.
    BUILTIN_ARGS = "E0502";
    /// A task id out of range for the architecture.
    TASK_ID_RANGE = "E0503";
    /// A task id bound twice.
    TASK_ID_TWICE = "E0504";
    /// A task called like a function, or a task with a bad signature.
    BAD_TASK = "E0505";
    /// An exported symbol with no matching `@export_name`, or a mismatched one.
    BAD_EXPORT = "E0506";
    /// A feature the target architecture does not have (e.g. message passing on wse2).
    ARCH_FEATURE = "E0507";
    /// The program does not fit in PE memory.
    OUT_OF_MEMORY = "E0601";
    /// A bad command-line argument.
    BAD_ARGUMENT = "E0901";
}
