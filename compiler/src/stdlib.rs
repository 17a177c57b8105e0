//! The bundled CSL libraries (`@import_module("<name>")`), embedded from `stdlib/`.

/// `(name, source)` rows of libraries, each read from `stdlib/<name>.csl`.
macro_rules! libs {
    ($($name:literal,)*) => {
        &[$(($name, include_str!(concat!("../../stdlib/", $name, ".csl")))),*]
    };
}

/// Every library: the name used inside `<...>` and its source.
const LIBS: &[(&str, &str)] = libs![
    "control",
    "layout",
    "simprint",
    "tile_config",
    "tile_config/task_priority",
    "tile_config/color_config",
    "tile_config/switch_config",
    "tile_config/teardown",
    "time",
    "math",
    "random",
    "directions",
    "debug",
    "message_passing",
    "collectives_2d/params",
    "collectives_2d/pe",
    "kernels/fft/fft3d_layout",
    "kernels/fft/fft3d_pe",
    "kernels/tally/layout",
    "kernels/tally/pe",
    "memcpy/get_params",
    "memcpy/memcpy",
    "memcpy/memcpy_switches",
];

/// The source of library `name`, if bundled.
pub fn lookup(name: &str) -> Option<&'static str> {
    LIBS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The only architecture library `name` exists on, if it is not on both:
/// `<message_passing>` needs the WSE-3 routers' message-passing mode.
pub fn required_arch(name: &str) -> Option<csl_arch::Arch> {
    (name == "message_passing").then_some(csl_arch::Arch::Wse3)
}

/// Names of every bundled library, sorted.
pub fn names() -> Vec<String> {
    let mut v: Vec<String> = LIBS.iter().map(|(n, _)| format!("<{n}>")).collect();
    v.sort();
    v
}

/// Every library as (name, source), for tests.
pub fn all() -> &'static [(&'static str, &'static str)] {
    LIBS
}
