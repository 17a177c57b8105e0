//! Host program of tutorial 01 (GEMV on one PE): `gemv-01 --name OUT`, where OUT is what
//! `cslc -o OUT` wrote. Prints y and `SUCCESS!` when it matches the host's reference.

fn main() -> std::process::ExitCode {
    csl_examples::gemv01::main_for("gemv-01")
}
