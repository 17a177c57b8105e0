//! The server: the handshake, the synchronous main loop over the connection, the open
//! documents and their analyses, and the dispatch of requests and notifications.
//!
//! Documents are analysed lazily: a change marks its document dirty, and the loop
//! analyses dirty documents once no message is waiting (so a burst of keystrokes costs
//! one compile) or when a request needs the document's analysis. A request that cannot
//! be served gets an error response; a notification that cannot be understood is logged
//! to stderr. Handlers run under `catch_unwind`, so a bug becomes an error response
//! rather than a dead server.

use crate::analysis::{self, Analysis, Lang, Settings};
use crate::{complete, convert, goto, hover, paint, symbols, tungsten};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::{
    CompletionOptions, HoverProviderCapability, OneOf, PublishDiagnosticsParams,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};
use serde_json::Value;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;

/// One open document.
struct Doc {
    uri: Uri,
    path: Option<PathBuf>,
    text: String,
    lang: Lang,
    version: i32,
    analysis: Option<Analysis>,
    dirty: bool,
}

/// The server's state.
pub struct Server {
    conn: Connection,
    docs: HashMap<String, Doc>,
    settings: Settings,
    shutting_down: bool,
    /// The last document analysed for a request without being open.
    scratch: Option<Doc>,
}

/// What the loop does after a message.
enum Next {
    Continue,
    Exit,
}

/// What the server can do, as told to the client.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["@".into(), ".".into()]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl Server {
    /// Performs the handshake on `conn`.
    pub fn initialize(conn: Connection) -> Result<Server, String> {
        let (id, params) = conn
            .initialize_start()
            .map_err(|e| format!("initialize: {e}"))?;
        let mut settings = Settings::default();
        if let Some(opts) = params.get("initializationOptions") {
            settings.update(opts);
        }
        let result = serde_json::json!({
            "capabilities": capabilities(),
            "serverInfo": { "name": "csl-lsp", "version": env!("CARGO_PKG_VERSION") },
        });
        conn.initialize_finish(id, result)
            .map_err(|e| format!("initialize: {e}"))?;
        Ok(Server {
            conn,
            docs: HashMap::new(),
            settings,
            shutting_down: false,
            scratch: None,
        })
    }

    /// Serves until `exit` or until the client goes away.
    pub fn run(mut self) {
        while let Ok(msg) = self.conn.receiver.recv() {
            if let Next::Exit = self.message(msg) {
                return;
            }
            while let Ok(msg) = self.conn.receiver.try_recv() {
                if let Next::Exit = self.message(msg) {
                    return;
                }
            }
            let dirty: Vec<String> = self
                .docs
                .iter()
                .filter(|(_, d)| d.dirty)
                .map(|(k, _)| k.clone())
                .collect();
            for key in dirty {
                self.refresh(&key);
            }
        }
    }

    fn message(&mut self, msg: Message) -> Next {
        match msg {
            Message::Request(req) => {
                let id = req.id.clone();
                let method = req.method.clone();
                let resp = std::panic::catch_unwind(AssertUnwindSafe(|| self.request(req)))
                    .unwrap_or_else(|_| {
                        Response::new_err(
                            id,
                            ErrorCode::InternalError as i32,
                            format!("csl-lsp failed on `{method}` (a bug; please report it)"),
                        )
                    });
                self.send(Message::Response(resp));
                Next::Continue
            }
            Message::Notification(n) => {
                if n.method == lsp_types::notification::Exit::METHOD {
                    return Next::Exit;
                }
                let method = n.method.clone();
                if std::panic::catch_unwind(AssertUnwindSafe(|| self.notification(n))).is_err() {
                    eprintln!("csl-lsp: failed on notification `{method}` (a bug)");
                }
                Next::Continue
            }
            Message::Response(_) => Next::Continue,
        }
    }

    fn send(&self, msg: Message) {
        if self.conn.sender.send(msg).is_err() {
            eprintln!("csl-lsp: the client has gone");
        }
    }

    fn request(&mut self, req: Request) -> Response {
        use lsp_types::request::*;
        let id = req.id.clone();
        if self.shutting_down {
            return Response::new_err(
                id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".into(),
            );
        }
        let result = match req.method.as_str() {
            Shutdown::METHOD => {
                self.shutting_down = true;
                Ok(Value::Null)
            }
            HoverRequest::METHOD => self.hover(req.params),
            GotoDefinition::METHOD => self.definition(req.params),
            DocumentSymbolRequest::METHOD => self.symbols(req.params),
            Completion::METHOD => self.completion(req.params),
            other => Err((
                ErrorCode::MethodNotFound,
                format!("csl-lsp does not implement `{other}`"),
            )),
        };
        respond(id, result)
    }

    fn notification(&mut self, n: Notification) {
        use lsp_types::notification::*;
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                else {
                    return eprintln!("csl-lsp: bad didOpen parameters");
                };
                let td = p.text_document;
                let path = convert::uri_to_path(&td.uri);
                let lang = Lang::of(&td.language_id, td.uri.as_str());
                self.docs.insert(
                    td.uri.as_str().to_string(),
                    Doc {
                        uri: td.uri,
                        path,
                        text: td.text,
                        lang,
                        version: td.version,
                        analysis: None,
                        dirty: true,
                    },
                );
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                else {
                    return eprintln!("csl-lsp: bad didChange parameters");
                };
                let Some(doc) = self.docs.get_mut(p.text_document.uri.as_str()) else {
                    return eprintln!("csl-lsp: change of a document that is not open");
                };
                for change in p.content_changes {
                    match change.range {
                        // Incremental changes are not asked for, but are applied if sent.
                        Some(r) => {
                            let ix = convert::LineIndex::new(&doc.text);
                            let (a, b) = (ix.offset(r.start), ix.offset(r.end));
                            let (a, b) = (a.min(b), a.max(b));
                            doc.text.replace_range(a..b, &change.text);
                        }
                        None => doc.text = change.text,
                    }
                }
                doc.version = p.text_document.version;
                doc.dirty = true;
            }
            DidSaveTextDocument::METHOD => {
                // Other documents may import the saved one.
                for d in self.docs.values_mut() {
                    d.dirty = true;
                }
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                else {
                    return eprintln!("csl-lsp: bad didClose parameters");
                };
                if let Some(doc) = self.docs.remove(p.text_document.uri.as_str()) {
                    self.publish(&doc.uri, Vec::new(), None);
                }
            }
            DidChangeConfiguration::METHOD => {
                if let Some(s) = n.params.get("settings") {
                    self.settings.update(s);
                }
                for d in self.docs.values_mut() {
                    d.dirty = true;
                }
            }
            _ => {}
        }
    }

    fn publish(&self, uri: &Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version,
        };
        self.send(Message::Notification(Notification::new(
            lsp_types::notification::PublishDiagnostics::METHOD.into(),
            params,
        )));
    }

    /// Analyses the document `key` and publishes its diagnostics.
    fn refresh(&mut self, key: &str) {
        let overlay: HashMap<PathBuf, String> = self
            .docs
            .values()
            .filter_map(|d| {
                let p = d.path.as_ref()?;
                let p = p.canonicalize().unwrap_or_else(|_| p.clone());
                Some((p, d.text.clone()))
            })
            .collect();
        let overlay = Arc::new(overlay);
        let Some(doc) = self.docs.get_mut(key) else {
            return;
        };
        let a = analysis::analyse(
            &doc.uri,
            doc.path.as_deref(),
            &doc.text,
            doc.lang,
            &self.settings,
            &overlay,
        );
        let diags = a.diagnostics.clone();
        doc.analysis = Some(a);
        doc.dirty = false;
        let (uri, version) = (doc.uri.clone(), doc.version);
        self.publish(&uri, diags, Some(version));
    }

    /// The up-to-date analysis of the document `uri` (opening it from disk if the
    /// client has not).
    fn analysis(&mut self, uri: &Uri) -> Result<&Doc, (ErrorCode, String)> {
        let key = uri.as_str().to_string();
        if !self.docs.contains_key(&key) {
            let (text, path) = from_disk(uri)?;
            let lang = Lang::of("", uri.as_str());
            let doc = Doc {
                uri: uri.clone(),
                path,
                text,
                lang,
                version: 0,
                analysis: None,
                dirty: true,
            };
            let overlay = Arc::new(HashMap::new());
            let a = analysis::analyse(
                &doc.uri,
                doc.path.as_deref(),
                &doc.text,
                lang,
                &self.settings,
                &overlay,
            );
            // Not kept: the client never opened it, so it will not close it either.
            self.scratch = Some(Doc {
                analysis: Some(a),
                dirty: false,
                ..doc
            });
            return self
                .scratch
                .as_ref()
                .ok_or((ErrorCode::InternalError, String::new()));
        }
        if self
            .docs
            .get(&key)
            .is_some_and(|d| d.dirty || d.analysis.is_none())
        {
            self.refresh(&key);
        }
        self.docs
            .get(&key)
            .ok_or((ErrorCode::InternalError, "document vanished".into()))
    }

    fn hover(&mut self, params: Value) -> Result<Value, (ErrorCode, String)> {
        let p: lsp_types::HoverParams = parse(params)?;
        let tdp = p.text_document_position_params;
        let (text, lang, path) = self.text_of(&tdp.text_document.uri)?;
        let dirs = &self.settings.lib_dirs;
        match lang {
            Lang::Tungsten => {
                return to_json(tungsten::hover(&text, path.as_deref(), dirs, tdp.position));
            }
            Lang::Paint => {
                return to_json(paint::hover(&text, path.as_deref(), dirs, tdp.position));
            }
            Lang::Csl => {}
        }
        self.on_csl(tdp, |_, a, pos| hover::hover(a, pos))
    }

    fn definition(&mut self, params: Value) -> Result<Value, (ErrorCode, String)> {
        let p: lsp_types::GotoDefinitionParams = parse(params)?;
        let tdp = p.text_document_position_params;
        let (text, lang, path) = self.text_of(&tdp.text_document.uri)?;
        let (dirs, uri) = (&self.settings.lib_dirs, &tdp.text_document.uri);
        match lang {
            Lang::Tungsten => {
                return to_json(tungsten::definition(
                    &text,
                    path.as_deref(),
                    dirs,
                    uri,
                    tdp.position,
                ));
            }
            Lang::Paint => {
                return to_json(paint::definition(
                    &text,
                    path.as_deref(),
                    dirs,
                    uri,
                    tdp.position,
                ));
            }
            Lang::Csl => {}
        }
        self.on_csl(tdp, |doc, a, pos| {
            goto::definition(a, &doc.uri, doc.path.as_deref(), pos)
        })
    }

    /// `answer` for a position in an analysed CSL document, as JSON; `null` for the
    /// other languages and for a document without an analysis.
    fn on_csl<T: serde::Serialize>(
        &mut self,
        tdp: lsp_types::TextDocumentPositionParams,
        answer: impl FnOnce(&Doc, &Analysis, lsp_types::Position) -> T,
    ) -> Result<Value, (ErrorCode, String)> {
        let doc = self.analysis(&tdp.text_document.uri)?;
        let (Lang::Csl, Some(a)) = (doc.lang, doc.analysis.as_ref()) else {
            return Ok(Value::Null);
        };
        to_json(answer(doc, a, tdp.position))
    }

    fn symbols(&mut self, params: Value) -> Result<Value, (ErrorCode, String)> {
        let p: lsp_types::DocumentSymbolParams = parse(params)?;
        let doc = self.text_of(&p.text_document.uri)?;
        match doc.1 {
            Lang::Csl => {}
            Lang::Tungsten => return to_json(symbols::tungsten_symbols(&doc.0)),
            Lang::Paint => return to_json(symbols::paint_symbols(&doc.0)),
        }
        let mut fake = cslc::SourceMap::new();
        let file = fake.add(String::new(), None, String::new());
        let (ast, _) = cslc::syntax::parse(file, &doc.0);
        to_json(symbols::document_symbols(&ast, &doc.0))
    }

    fn completion(&mut self, params: Value) -> Result<Value, (ErrorCode, String)> {
        let p: lsp_types::CompletionParams = parse(params)?;
        let tdp = p.text_document_position;
        let (text, lang, path) = self.text_of(&tdp.text_document.uri)?;
        match lang {
            Lang::Csl => to_json(complete::complete(&text, path.as_deref(), tdp.position)),
            Lang::Paint => {
                let dirs = &self.settings.lib_dirs;
                match paint::binding_completions(&text, path.as_deref(), dirs, tdp.position) {
                    Some(items) => to_json(items),
                    None => to_json(complete::paint_complete(&text)),
                }
            }
            Lang::Tungsten => {
                let dirs = &self.settings.lib_dirs;
                to_json(tungsten::complete(
                    &text,
                    path.as_deref(),
                    dirs,
                    tdp.position,
                ))
            }
        }
    }

    /// The current text, language and path of a document (open, or read from disk).
    fn text_of(&self, uri: &Uri) -> Result<(String, Lang, Option<PathBuf>), (ErrorCode, String)> {
        if let Some(d) = self.docs.get(uri.as_str()) {
            return Ok((d.text.clone(), d.lang, d.path.clone()));
        }
        let (text, path) = from_disk(uri)?;
        Ok((text, Lang::of("", uri.as_str()), path))
    }
}

/// The text and path of a document the client has not opened, read from disk.
fn from_disk(uri: &Uri) -> Result<(String, Option<PathBuf>), (ErrorCode, String)> {
    let path = convert::uri_to_path(uri);
    let text = path
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .ok_or_else(|| {
            (
                ErrorCode::InvalidParams,
                format!("`{}` is neither open nor a readable file", uri.as_str()),
            )
        })?;
    Ok((text, path))
}

fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, (ErrorCode, String)> {
    serde_json::from_value(params)
        .map_err(|e| (ErrorCode::InvalidParams, format!("bad parameters: {e}")))
}

fn to_json<T: serde::Serialize>(v: T) -> Result<Value, (ErrorCode, String)> {
    serde_json::to_value(v).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

fn respond(id: RequestId, result: Result<Value, (ErrorCode, String)>) -> Response {
    match result {
        Ok(v) => Response {
            id,
            result: Some(v),
            error: None,
        },
        Err((code, msg)) => Response::new_err(id, code as i32, msg),
    }
}
