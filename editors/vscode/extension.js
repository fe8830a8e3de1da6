// The ttd extension: VS Code starts `ttd dap` (the binary named by the
// ttd.path setting) for every "ttd" debug session and talks the Debug
// Adapter Protocol with it on stdin/stdout.
'use strict';
const vscode = require('vscode');

class TtdAdapterFactory {
  createDebugAdapterDescriptor(_session, _executable) {
    const path = vscode.workspace.getConfiguration('ttd').get('path') || 'ttd';
    return new vscode.DebugAdapterExecutable(path, ['dap']);
  }
}

class TtdConfigurationProvider {
  // A launch with no launch.json: record the active file's program.
  resolveDebugConfiguration(folder, config) {
    if (!config.type && !config.request && !config.name) {
      config.type = 'ttd';
      config.request = 'launch';
      config.name = 'Record and debug';
      config.program = folder ? folder.uri.fsPath + '/a.out' : 'a.out';
    }
    if (!config.trace && !config.program) {
      return vscode.window.showErrorMessage('ttd: the launch configuration needs "trace" or "program".').then(() => undefined);
    }
    return config;
  }
}

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('ttd', new TtdAdapterFactory()),
    vscode.debug.registerDebugConfigurationProvider('ttd', new TtdConfigurationProvider()));
}

function deactivate() {}

module.exports = { activate, deactivate };
