//! The bundled CSL libraries (`@import_module("<name>")`), embedded from `stdlib/`.

/// Every library: the name used inside `<...>` and its source.
const LIBS: &[(&str, &str)] = &[
    ("control", include_str!("../../stdlib/control.csl")),
    ("layout", include_str!("../../stdlib/layout.csl")),
    ("simprint", include_str!("../../stdlib/simprint.csl")),
    ("tile_config", include_str!("../../stdlib/tile_config.csl")),
    (
        "tile_config/task_priority",
        include_str!("../../stdlib/tile_config/task_priority.csl"),
    ),
    (
        "tile_config/color_config",
        include_str!("../../stdlib/tile_config/color_config.csl"),
    ),
    (
        "tile_config/switch_config",
        include_str!("../../stdlib/tile_config/switch_config.csl"),
    ),
    (
        "tile_config/teardown",
        include_str!("../../stdlib/tile_config/teardown.csl"),
    ),
    ("time", include_str!("../../stdlib/time.csl")),
    ("math", include_str!("../../stdlib/math.csl")),
    ("random", include_str!("../../stdlib/random.csl")),
    ("directions", include_str!("../../stdlib/directions.csl")),
    ("debug", include_str!("../../stdlib/debug.csl")),
    (
        "message_passing",
        include_str!("../../stdlib/message_passing.csl"),
    ),
    (
        "collectives_2d/params",
        include_str!("../../stdlib/collectives_2d/params.csl"),
    ),
    (
        "collectives_2d/pe",
        include_str!("../../stdlib/collectives_2d/pe.csl"),
    ),
    (
        "kernels/fft/fft3d_layout",
        include_str!("../../stdlib/kernels/fft/fft3d_layout.csl"),
    ),
    (
        "kernels/fft/fft3d_pe",
        include_str!("../../stdlib/kernels/fft/fft3d_pe.csl"),
    ),
    (
        "kernels/tally/layout",
        include_str!("../../stdlib/kernels/tally/layout.csl"),
    ),
    (
        "kernels/tally/pe",
        include_str!("../../stdlib/kernels/tally/pe.csl"),
    ),
    (
        "memcpy/get_params",
        include_str!("../../stdlib/memcpy/get_params.csl"),
    ),
    (
        "memcpy/memcpy",
        include_str!("../../stdlib/memcpy/memcpy.csl"),
    ),
    (
        "memcpy/memcpy_switches",
        include_str!("../../stdlib/memcpy/memcpy_switches.csl"),
    ),
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
