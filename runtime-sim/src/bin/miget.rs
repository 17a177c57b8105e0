//! `miget`: reads a symbol of every tile of a named region from an image or a core file
//! (`simfabric`'s final state), as the experimental Tungsten SDK's tool of that name does
//! (SIMULATOR.md §14).
//!
//! Exit status: 0 on success, 1 with a one-line message on any failure.

use cslsim::tools::{
    DEFAULT_ORDER, KeyArgs, SymbolTarget, TableTarget, ToolError, get_symbol, get_table,
    read_image, read_map, tool_main, write_words,
};
use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
miget: read a symbol of every tile of a region from an image or core file

usage: miget image=CORE map=MAP symbol=REGION.SYM [order=\"y x _word\"] data=FILE
       miget image=CORE map=MAP symbol=router|switch [order=\"y x r\"] data=FILE

  image=CORE   a core file written by simfabric (or any image: its memory at load)
  map=MAP      the symbol map `paint` wrote next to the image
  symbol=R.S   symbol S of the program on region R (name('R) in Paint)
  order=O      how FILE walks the region: `y`, `x` and `_word`, outermost first
               (default \"y x _word\": rows, then columns, then the symbol's words)
  data=FILE    written: 16-bit little-endian words, (tiles of R) x (words of S)

The magic symbols `router` (order \"y x r\") and `switch` (order \"y x r n\"), or
`REGION.router`/`REGION.switch`, read the router and switch tables (see miset --help);
on a core they are the configuration at load.
";

fn main() -> ExitCode {
    tool_main("miget", HELP, |args| run(args).map(|()| ExitCode::SUCCESS))
}

fn run(args: &[String]) -> Result<(), ToolError> {
    let a = KeyArgs::parse(args, &["image", "map", "symbol", "order", "data"])?;
    let image_path = PathBuf::from(a.require("image", "CORE")?);
    let map_path = PathBuf::from(a.require("map", "MAP")?);
    let symbol = a.require("symbol", "REGION.SYM")?;
    let data = PathBuf::from(a.require("data", "FILE")?);
    let order = a.get("order").unwrap_or(DEFAULT_ORDER);
    let image = read_image(&image_path)?;
    let map = read_map(&map_path)?;
    if let Some(table) = TableTarget::resolve(&map, &image, symbol, a.get("order"))? {
        return write_words(&data, &get_table(&image, &table));
    }
    let target = SymbolTarget::resolve(&map, &image, symbol, order)?;
    write_words(&data, &get_symbol(&image, &target))
}
