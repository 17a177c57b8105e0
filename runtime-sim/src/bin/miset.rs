//! `miset`: writes a symbol of every tile of a named region into an image, as the
//! experimental Tungsten SDK's tool of that name does (SIMULATOR.md §14).
//!
//! Exit status: 0 on success, 1 with a one-line message on any failure.

use cslsim::tools::{
    DEFAULT_ORDER, KeyArgs, SymbolTarget, TableTarget, ToolError, read_image, read_map, read_words,
    set_symbol, set_table, tool_main, write_image,
};
use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
miset: write a symbol of every tile of a region into an image

usage: miset image=IN out=OUT map=MAP symbol=REGION.SYM [order=\"y x _word\"] data=FILE
       miset image=IN out=OUT map=MAP symbol=router|switch [order=\"y x r\"] data=FILE

  image=IN     the image (or core file) to start from
  out=OUT      where to write the result (may be IN itself)
  map=MAP      the symbol map `paint` wrote next to the image
  symbol=R.S   symbol S of the program on region R (name('R) in Paint)
  order=O      how FILE walks the region: `y`, `x` and `_word`, outermost first
               (default \"y x _word\": rows, then columns, then the symbol's words)
  data=FILE    16-bit little-endian words: (tiles of R) x (words of S) of them

The values become per-tile memory patches (`.csl.tilemem`) applied over the program's
initial memory when the image is loaded.

The magic symbols `router` and `switch` (or `REGION.router`, `REGION.switch`) are the
router and switch tables of every tile of the image (moat included), or of the region:
  router  order \"y x r\" (default): one word per tile and colour r (24 colours)
  switch  order \"y x r n\" (default): four words per colour, n = 0 the status word,
          n = 1..3 switch positions 1..3
They replace the tiles' colour configuration (filters stay). The word format is
csl_arch::tables (SIMULATOR.md section 14).
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
    if let Some(table) = TableTarget::resolve(&map, &image, symbol, a.get("order"))? {
        let words = read_words(&data)?;
        set_table(&mut image, &table, &words, &data)?;
        return write_image(&out, &image);
    }
    let target = SymbolTarget::resolve(&map, &image, symbol, order)?;
    let words = read_words(&data)?;
    set_symbol(&mut image, &target, &words, &data)?;
    write_image(&out, &image)
}
