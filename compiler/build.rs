//! Build script: generates the CSL parser (`OUT_DIR/csl.rs`) from `../grammar/csl.lalrpop`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    lalrpop::Configuration::new()
        .set_in_dir("../grammar")
        .set_out_dir(std::env::var("OUT_DIR")?)
        .emit_rerun_directives(true)
        .process()?;
    Ok(())
}
