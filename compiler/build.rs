//! Build script: generates the parsers (`OUT_DIR/csl.rs`, `tungsten.rs`, `paint.rs`) from
//! every grammar in `../grammar/`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The directory itself, so that a newly added grammar re-runs this script (lalrpop's
    // own directives name only the files that existed at the last run).
    println!("cargo:rerun-if-changed=../grammar");
    lalrpop::Configuration::new()
        .set_in_dir("../grammar")
        .set_out_dir(std::env::var("OUT_DIR")?)
        .emit_rerun_directives(true)
        .process()?;
    Ok(())
}
