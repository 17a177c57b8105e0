//! `csl-lsp`: a language server for CSL (`.csl`), Tungsten (`.w`) and Paint (`.paint`)
//! files, speaking the Language Server Protocol over standard input and output.
//!
//! Modules: [`server`] (handshake, main loop, documents, dispatch), [`analysis`] (running
//! the compilers), [`convert`] (positions, URIs, diagnostics), [`files`] (the files a
//! Tungsten or Paint document reads), [`scope`] (CSL names from
//! the syntax tree), [`symbols`] (outline), [`hover`], [`goto`] (definition),
//! [`complete`]; [`tungsten`] (hover, definition and completion for `.w` files) and
//! [`paint`] (hover and definition for `.paint` files).

mod analysis;
mod complete;
mod convert;
mod files;
mod goto;
mod hover;
mod paint;
mod scope;
mod server;
mod symbols;
mod tungsten;

use std::process::ExitCode;

/// Stack of the thread that serves requests.
const SERVER_STACK_BYTES: usize = 64 << 20;

fn main() -> ExitCode {
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--version" | "-V" => {
                println!("csl-lsp {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            // Clients add it to say the transport; standard I/O is the only one.
            "--stdio" => {}
            _ => {
                eprintln!(
                    "usage: csl-lsp [--stdio]\n\nA language server for CSL, Tungsten and Paint over standard input and output; started by an editor."
                );
                return ExitCode::from(2);
            }
        }
    }
    let (conn, io) = lsp_server::Connection::stdio();
    // Requests walk syntax trees on this thread: give it room, as the compiler's own
    // analysis thread has.
    let served = std::thread::Builder::new()
        .name("csl-lsp".into())
        .stack_size(SERVER_STACK_BYTES)
        .spawn(move || match server::Server::initialize(conn) {
            Ok(server) => {
                server.run();
                true
            }
            Err(e) => {
                eprintln!("csl-lsp: {e}");
                false
            }
        })
        .map(|t| t.join().unwrap_or(false));
    match served {
        Ok(true) => {}
        Ok(false) => return ExitCode::FAILURE,
        Err(e) => {
            eprintln!("csl-lsp: cannot start the server thread: {e}");
            return ExitCode::FAILURE;
        }
    }
    match io.join() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("csl-lsp: {e}");
            ExitCode::FAILURE
        }
    }
}
