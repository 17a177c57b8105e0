//! `miset`: writes a symbol of every tile of a named region into an image, as the
//! experimental Tungsten SDK's tool of that name does (SIMULATOR.md §14).
//!
//! Exit status: 0 on success, 1 with a one-line message on any failure.

use cslsim::tools::{
    DEFAULT_ORDER, KeyArgs, SymbolTarget, ToolError, read_image, read_map, read_words, set_symbol,
    tool_main, write_image,
};
use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
miset: write a symbol of every tile of a region into an image

usage: miset image=IN out=OUT map=MAP symbol=REGION.SYM [order=\"y x _word\"] data=FILE

  image=IN     the image (or core file) to start from
  out=OUT      where to write the result (may be IN itself)
  map=MAP      the symbol map `paint` wrote next to the image
  symbol=R.S   symbol S of the program on region R (name('R) in Paint)
  order=O      how FILE walks the region: `y`, `x` and `_word`, outermost first
               (default \"y x _word\": rows, then columns, then the symbol's words)
  data=FILE    16-bit little-endian words: (tiles of R) x (words of S) of them

The values become per-tile memory patches (`.csl.tilemem`) applied over the program's
initial memory when the image is loaded. The reserved symbols `router` and `switch`
are not supported yet.
";

fn main() -> ExitCode {
    tool_main("miset", HELP, |args| run(args).map(|()| ExitCode::SUCCESS))
}

fn run(args: &[String]) -> Result<(), ToolError> {
    let a = KeyArgs::parse(args, &["image", "out", "map", "symbol", "order", "data"])?;
    let image_path = PathBuf::from(a.require("image", "IN")?);
    let out = PathBuf::from(a.require("out", "OUT")?);
    let map_path = PathBuf::from(a.require("map", "MAP")?);
    let symbol = a.require("symbol", "REGION.SYM")?;
    let data = PathBuf::from(a.require("data", "FILE")?);
    let order = a.get("order").unwrap_or(DEFAULT_ORDER);
    let mut image = read_image(&image_path)?;
    let map = read_map(&map_path)?;
    let target = SymbolTarget::resolve(&map, &image, symbol, order)?;
    let words = read_words(&data)?;
    set_symbol(&mut image, &target, &words, &data)?;
    write_image(&out, &image)
}
