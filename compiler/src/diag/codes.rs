//! The registry of diagnostic codes. Each code is defined once here, with a one-line
//! description; a tidy test checks that every code has at least one test case.
//!
//! Ranges: E00xx lexing and parsing, E01xx names and modules, E02xx types and
//! expressions, E03xx comptime evaluation, E04xx layout, E05xx tasks and builtins,
//! E06xx code generation and memory, E07xx static route checks (warnings), E09xx command
//! line.

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
    /// The descriptors of a fabric DSD operation disagree on its length (a warning).
    DSD_LENGTH = "E0508";
    /// The program does not fit in PE memory.
    OUT_OF_MEMORY = "E0601";
    /// A colour sent into a neighbour whose router has no route accepting it from that side
    /// (a warning).
    ROUTE_NO_RECEIVER = "E0701";
    /// A colour received from a side on which no neighbour sends it (a warning).
    ROUTE_NO_SENDER = "E0702";
    /// A route that sends to, or receives from, beyond the edge of the rectangle (a
    /// warning).
    ROUTE_OFF_EDGE = "E0703";
    /// A data task bound to a colour that no route delivers to its PE (a warning).
    ROUTE_TASK_UNREACHED = "E0704";
    /// A colour delivered to a PE whose program does not read it (a warning).
    ROUTE_UNREAD = "E0705";
    /// Two routes delivering one colour to one PE from two sides at once: one CE's
    /// wavelets arrive twice (a warning).
    ROUTE_MERGE = "E0706";
    /// A cycle of routes in which back-pressure can deadlock the fabric (a warning).
    ROUTE_CYCLE = "E0707";
    /// A bad command-line argument.
    BAD_ARGUMENT = "E0901";
    // --- Tungsten (`.w`): E10xx lexing and parsing, E11xx names, types, casts, sockets.
    // (Tungsten codes go here, in order.)
    /// Tungsten: a character that starts no token.
    TUNG_STRAY_CHAR = "E1001";
    /// Tungsten: a malformed number literal.
    TUNG_BAD_NUMBER = "E1002";
    /// Tungsten: an unexpected token.
    TUNG_UNEXPECTED_TOKEN = "E1003";
    /// Tungsten: the file ended in the middle of a construct.
    TUNG_UNEXPECTED_EOF = "E1004";
    /// Tungsten: a block comment or string without its end.
    TUNG_UNTERMINATED = "E1005";
    /// Tungsten: brackets nested too deep.
    TUNG_TOO_DEEP = "E1006";
    /// Tungsten: an imported file that cannot be found or read.
    TUNG_IMPORT = "E1007";
    /// Tungsten: an unknown `#pragma` (a warning).
    TUNG_PRAGMA = "E1008";
    /// Tungsten: a file without an entry block, or with more than one.
    TUNG_ENTRY = "E1009";
    /// Tungsten: a name that is not declared.
    TUNG_UNDEFINED = "E1101";
    /// Tungsten: a name declared twice.
    TUNG_DUPLICATE = "E1102";
    /// Tungsten: a value of the wrong type or shape.
    TUNG_TYPE_MISMATCH = "E1103";
    /// Tungsten: an unsigned integer converted to a float (SDR has no such instruction).
    TUNG_UNSIGNED_TO_FLOAT = "E1104";
    /// Tungsten: a bitcast between types of different widths.
    TUNG_BITCAST_WIDTH = "E1105";
    /// Tungsten: a 64-bit value stored, copied or bitcast.
    TUNG_NO_64BIT = "E1106";
    /// Tungsten: a `:TYPE` suffix on something other than a plain literal.
    TUNG_TYPED_SUFFIX = "E1107";
    /// Tungsten: a value that must be known at compile time is not.
    TUNG_NOT_CONST = "E1108";
    /// Tungsten: a bad param declaration or param override.
    TUNG_PARAM = "E1109";
    /// Tungsten: a socket used where a value is needed, or a value used as a socket.
    TUNG_SOCKET_MISUSE = "E1110";
    /// Tungsten: a socket read whose type nothing fixes.
    TUNG_SOCKET_READ_TYPE = "E1111";
    /// Tungsten: a socket that Paint does not bind, or more sockets than queues.
    TUNG_SOCKET_BINDING = "E1112";
    /// Tungsten: `flip` not directly after a send on the same socket.
    TUNG_FLIP = "E1113";
    /// Tungsten: `.index`/`.data` of a socket outside the one loop form that allows it.
    TUNG_INDEX_HALF = "E1114";
    /// Tungsten: more socket statements in one `parallel` block than microthreads.
    TUNG_PARALLEL = "E1115";
    /// Tungsten: a function that calls itself, directly or not.
    TUNG_RECURSION = "E1116";
    /// Tungsten: a bad call or return.
    TUNG_CALL = "E1117";
    /// Tungsten: an assignment to something that is not a variable or element.
    TUNG_NOT_LVALUE = "E1118";
    /// Tungsten: a bad `address(...)`.
    TUNG_ADDRESS = "E1119";
    /// Tungsten: a construct this compiler does not support.
    TUNG_UNSUPPORTED = "E1120";
    /// Tungsten: `∞` or `NAN` where it cannot be used.
    TUNG_SPECIAL_CONST = "E1121";
    /// Tungsten: an initialiser that does not fit its variable.
    TUNG_INIT = "E1122";
    /// Tungsten: `control(w)` anywhere but as the value of a send.
    TUNG_CONTROL = "E1123";
    /// Tungsten: a literal whose value its type cannot hold.
    TUNG_LITERAL_RANGE = "E1124";
    // --- Paint (`.paint`): E12xx.
    /// Paint: a character that starts no token.
    PAINT_STRAY_CHAR = "E1201";
    /// Paint: a malformed number literal.
    PAINT_BAD_NUMBER = "E1202";
    /// Paint: a `(* ... *)` comment or a string without its end.
    PAINT_UNTERMINATED = "E1203";
    /// Paint: an unexpected token.
    PAINT_UNEXPECTED_TOKEN = "E1204";
    /// Paint: an item that ends in the middle of a construct.
    PAINT_UNEXPECTED_EOF = "E1205";
    /// Paint: an item or evaluation nested too deep.
    PAINT_TOO_DEEP = "E1206";
    /// Paint: an included file that cannot be found or read, or that includes itself.
    PAINT_INCLUDE = "E1207";
    /// Paint: a name that is neither bound by `let` nor given on the command line.
    PAINT_UNDEFINED = "E1208";
    /// Paint: a name bound twice, or a function named like a builtin.
    PAINT_DUPLICATE = "E1209";
    /// Paint: a value of the wrong kind (a region where a number is needed, ...).
    PAINT_TYPE = "E1210";
    /// Paint: a call with the wrong number of arguments.
    PAINT_ARGS = "E1211";
    /// Paint: a division by zero or an overflow.
    PAINT_ARITH = "E1212";
    /// Paint: a colour number outside 0..=23, or no colour left for `color()`.
    PAINT_BAD_COLOR = "E1213";
    /// Paint: `color(N)` of a colour another `color()` or `color(N)` already took.
    PAINT_COLOR_TAKEN = "E1214";
    /// Paint: a malformed route or edge suppression in `paint()`.
    PAINT_ROUTE_SYNTAX = "E1215";
    /// Paint: routes of one colour on one tile that one switch position cannot express.
    PAINT_ROUTE_CONFLICT = "E1216";
    /// Paint: a route that sends toward a side where the layout has no tile.
    PAINT_OFF_EDGE = "E1217";
    /// Paint: a bad rectangle, or a region outside the layout.
    PAINT_BAD_REGION = "E1218";
    /// Paint: a file whose last expression is not the layout region.
    PAINT_NO_LAYOUT = "E1219";
    /// Paint: `colorpair(a b)` of two colours that are not a hardware pair (c, c^1).
    PAINT_COLORPAIR = "E1220";
    /// Paint: two `code()` actions on one tile.
    PAINT_CODE_TWICE = "E1221";
    /// Paint: a `code()` program that cannot be found or read.
    PAINT_PROGRAM_NOT_FOUND = "E1222";
    /// Paint: a bad socket binding or param override in `code()`.
    PAINT_BINDING = "E1223";
    /// Paint: a bad `name()` (before `code()`, twice, or over tiles whose symbols differ).
    PAINT_NAME = "E1224";
    /// Paint: a bad `mp()` (on wse2, or on a painted colour).
    PAINT_MP = "E1225";
    // E1226 (a Paint construct not supported yet: `hstack`, `vstack`, `rep`, `split`) is
    // retired: they are supported.
    /// Paint: Paint functions that call each other without end.
    PAINT_RECURSION = "E1227";
    /// Paint: an expression whose value is not used (a warning).
    PAINT_UNUSED = "E1228";
    /// Paint: a bad `paint` command-line argument.
    PAINT_ARGUMENT = "E1229";
    /// Paint: a bad `switch()` (position or option syntax, no `paint()` of the colour on a
    /// tile, a position that sends where the layout has no tile).
    PAINT_SWITCH = "E1230";
}
