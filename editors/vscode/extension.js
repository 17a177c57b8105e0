// The csl-lsp extension: starts the `csl-lsp` language server for CSL, Tungsten and
// Paint files. Plain JavaScript, so there is nothing to compile; `npm install` in this
// folder fetches the language client library.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function settings() {
  const c = vscode.workspace.getConfiguration("csl-lsp");
  return {
    arch: c.get("arch"),
    paintArch: c.get("paintArch"),
    params: c.get("params"),
    libDirs: c.get("libDirs"),
  };
}

function activate(context) {
  const command = vscode.workspace.getConfiguration("csl-lsp").get("serverPath") || "csl-lsp";
  const serverOptions = {
    run: { command, transport: TransportKind.stdio },
    debug: { command, transport: TransportKind.stdio },
  };
  const clientOptions = {
    documentSelector: [
      { scheme: "file", language: "csl" },
      { scheme: "file", language: "tungsten" },
      { scheme: "file", language: "paint" },
      { scheme: "untitled", language: "csl" },
    ],
    initializationOptions: settings(),
    synchronize: { configurationSection: "csl-lsp" },
  };
  client = new LanguageClient("csl-lsp", "CSL language server", serverOptions, clientOptions);
  client.start();
  context.subscriptions.push({ dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
