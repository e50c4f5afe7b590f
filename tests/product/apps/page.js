// The test host's page (bundled by host.mjs with esbuild): one view in a sandboxed iframe, talking to an AppBridge.
// The bridge forwards the view's tools/call and ui/open-link to host.mjs (functions puppeteer exposes on this page),
// which calls papercode over stdio and records every call.

import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

let bridge = null;
let iframe = null;
let context = null;

window.showView = async ({ viewUrl, args, result, hostContext }) => {
  context = hostContext;
  document.body.className = hostContext.theme;
  iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts"); // an opaque origin: no access to this page, its storage or cookies
  iframe.style.width = `${hostContext.containerDimensions.width}px`;
  iframe.style.height = "200px";
  document.getElementById("frame").append(iframe);
  bridge = new AppBridge(null, { name: "papercode test host", version: "1.0.0" }, { openLinks: {}, serverTools: {}, logging: {} }, { hostContext });
  bridge.oncalltool = (params) => window.hostCallTool(params);
  bridge.onopenlink = async ({ url }) => {
    await window.hostOpenLink(url);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${Math.ceil(height)}px`;
  };
  bridge.onloggingmessage = (params) => window.hostLog(JSON.stringify(params));
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.src = viewUrl;
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
};

window.changeContext = async (changes) => {
  context = { ...context, ...changes };
  document.body.className = context.theme;
  if (changes.containerDimensions) iframe.style.width = `${changes.containerDimensions.width}px`;
  bridge.setHostContext(context);
};
