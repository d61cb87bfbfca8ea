// Starts `shapetorch lsp` for Python files. The server only adds shapes, so it runs beside Pylance.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("shapetorch");
  const [command, ...args] = config.get("command");
  client = new LanguageClient(
    "shapetorch",
    "shapetorch",
    { command, args },
    {
      documentSelector: [{ scheme: "file", language: "python" }],
      initializationOptions: {
        inlayHints: config.get("inlayHints"),
        mypyDiagnostics: config.get("mypyDiagnostics"),
        debounce: config.get("debounce"),
      },
      // a change of the settings reaches the server as {"shapetorch": {...}}
      synchronize: { configurationSection: "shapetorch" },
    },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
