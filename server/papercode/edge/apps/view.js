// papercode's views: what both share. edge/views.py joins the vendored library (which binds `ExtApps`), this file and
// the view's own file into one inline module script, so what is declared here is in scope for the view.
//
// Every value that comes from an answer is inserted as text (text nodes, attribute values), never parsed as HTML:
// no markup is ever built from strings here (tests/edge/test_views.py checks the sources), and links open only http(s)
// URLs, through the host (ui/open-link).

const SVG_NS = "http://www.w3.org/2000/svg";
const NARROW_PX = 560;

// STATUSES, the samples' statuses best first with what each means ([[status, meaning], ...]), is declared ahead of this
// file by edge/views.py from core/records.py's STATUS_MEANINGS: the words have one home.
const STATUS_MEANING = new Map(STATUSES);

/** An element with `props` (class, text, title, attrs, on: {event: handler}) and children (nodes or strings, as text). */
function el(tag, props = {}, ...children) {
  return build(document.createElement(tag), props, children);
}

/** An SVG element, as `el` makes an HTML one. */
function svg(tag, props = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), props, children);
}

function build(node, props, children) {
  if (props.class) node.setAttribute("class", props.class);
  if (props.text !== undefined && props.text !== null) node.textContent = String(props.text);
  if (props.title) node.setAttribute("title", String(props.title));
  for (const [name, value] of Object.entries(props.attrs || {})) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  for (const [event, handler] of Object.entries(props.on || {})) node.addEventListener(event, handler);
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  return node;
}

/** `text` if it is an http(s) URL, else null: a link never runs script or leaves for another scheme. */
function httpUrl(text) {
  if (typeof text !== "string") return null;
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

/** A link opened by the host (a sandboxed view cannot navigate); plain text when `url` is not http(s). */
function link(url, label, props = {}) {
  const href = httpUrl(url);
  if (href === null) return el("span", { ...props, text: label });
  return el("a", {
    ...props,
    text: label,
    attrs: { href, target: "_blank", rel: "noopener noreferrer", ...(props.attrs || {}) },
    on: {
      click: (event) => {
        event.preventDefault();
        view.app.openLink({ url: href }).catch(() => {});
      },
    },
  });
}

/** A repository URL as people say it: `owner/name` on GitHub, host and path elsewhere. */
function repoLabel(url) {
  const href = httpUrl(url);
  if (href === null) return String(url ?? "");
  const parsed = new URL(href);
  const path = parsed.pathname.replace(/\/+$/, "").replace(/^\//, "");
  return parsed.hostname === "github.com" || parsed.hostname === "www.github.com" ? path : `${parsed.hostname}/${path}`;
}

/** A date of an answer (YYYY-MM-DD) as a date, in the host's locale; the text itself when it is not one. */
function formatDate(text, style = "medium") {
  const time = dayTime(text);
  if (time === null) return text ?? "";
  const options = style === "year" ? { year: "numeric" } : { year: "numeric", month: "short", day: "numeric" };
  return new Intl.DateTimeFormat(view.locale, { ...options, timeZone: "UTC" }).format(new Date(time));
}

/** Milliseconds of a YYYY-MM-DD day (UTC), or null. */
function dayTime(text) {
  const found = /^(\d{4})-(\d{2})-(\d{2})/.exec(typeof text === "string" ? text : "");
  if (!found) return null;
  const time = Date.UTC(Number(found[1]), Number(found[2]) - 1, Number(found[3]));
  return Number.isFinite(time) ? time : null;
}

function formatCount(n) {
  return new Intl.NumberFormat(view.locale).format(n);
}

function plural(n, one, many = `${one}s`) {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** A status badge; its title says what the status means. */
function statusBadge(status) {
  const known = STATUS_MEANING.has(status);
  return el("span", {
    class: `badge s-${known ? status : "unknown"}`,
    text: status,
    title: known ? STATUS_MEANING.get(status) : "a status this view does not know",
  });
}

/** The answer a tool result holds: its structured content, else the JSON of its text. Throws the error text. */
function answerOf(result) {
  const text = (result?.content || []).find((block) => block.type === "text")?.text;
  if (result?.isError) throw new Error(text || "the call failed");
  if (result?.structuredContent) return result.structuredContent;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(text || "the answer holds no data");
  }
}

/** A tool of papercode's, called through the host; its answer (or the error it gave, thrown). */
async function callTool(name, args) {
  return answerOf(await view.app.callServerTool({ name, arguments: args }));
}

function setContent(root, ...children) {
  root.replaceChildren(...children.flat().filter(Boolean));
}

function errorBox(error) {
  return el("div", { class: "error", attrs: { role: "alert" }, text: error instanceof Error ? error.message : String(error) });
}

function footer(answer) {
  return answer?.attribution ? el("div", { class: "footer", text: answer.attribution }) : null;
}

/** The host connection: the host's theme and locale applied, `onInput` and `onResult` called with what the host sends,
 * and `onWidth` when the view's width crosses between narrow and wide or changes. */
const view = {
  app: null,
  locale: undefined,
  narrow: false,
  width: 0,

  start({ name, onInput, onResult, onWidth }) {
    const app = new ExtApps.App({ name: `papercode ${name}`, version: "1" }, {}, { autoResize: true });
    this.app = app;
    app.ontoolinput = (params) => onInput(params?.arguments || {});
    app.ontoolresult = (result) => onResult(result);
    app.ontoolcancelled = () => onResult({ isError: true, content: [{ type: "text", text: "The call was cancelled." }] });
    app.onhostcontextchanged = (context) => this.applyContext(context);
    app.onteardown = async () => ({});
    const resized = new ResizeObserver(() => this.measure(onWidth));
    resized.observe(document.documentElement);
    this.measure(onWidth);
    app
      .connect()
      .then(() => this.applyContext(app.getHostContext()))
      .catch((error) => setContent(document.getElementById("view"), errorBox(`Could not connect to the host: ${error.message}`)));
  },

  applyContext(context) {
    if (!context) return;
    if (context.theme === "light" || context.theme === "dark") ExtApps.applyDocumentTheme(context.theme);
    if (context.styles?.variables) ExtApps.applyHostStyleVariables(context.styles.variables);
    if (typeof context.locale === "string") {
      try {
        this.locale = Intl.getCanonicalLocales(context.locale)[0];
      } catch {
        this.locale = undefined;
      }
    }
  },

  measure(onWidth) {
    const width = document.documentElement.clientWidth;
    if (width === this.width) return;
    this.width = width;
    this.narrow = width < NARROW_PX;
    document.documentElement.classList.toggle("narrow", this.narrow);
    onWidth?.(width);
  },
};
