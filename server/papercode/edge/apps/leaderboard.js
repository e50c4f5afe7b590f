// The leaderboard view: a benchmark's results over time (x: the paper's date, y: the metric), the state of the art as
// a step line in the metric's direction, each point marked by its paper's code, and the top rows as a table. It
// pages through the board with get_leaderboard through the host (50 rows a call, up to 1,000), and asks again the same
// way when the metric or the code filter changes. Without a dataset: the task's benchmarks, each with its best result.

const PAGE_ROWS = 50; // get_leaderboard's largest page
const MOST_ROWS = 1000; // how far into a board the view reads
const MOST_BENCHMARKS = 200; // how many of a task's benchmarks the view lists, the busiest (it says so when a task has more)
const TABLE_FIRST = 10;
const TABLE_STEP = 25;
const CODE_KINDS = {
  ran: "harvested code ran",
  code: "has code",
  none: "no code",
};

const state = {
  input: {}, // the tool's arguments, as the host sent them
  query: null, // what the rows shown answer: {task, dataset, metric, order, has_code, status}
  board: null, // the board's latest answer (task, dataset, metric, direction, metrics, total, note, attribution)
  rows: [],
  loading: false,
  error: null,
  generation: 0, // a newer load makes an older one's pages stale
  tableRows: TABLE_FIRST,
  overview: null, // the task's benchmarks, when the view shows them or a board opened from them
  overviewLoading: false,
};

const root = () => document.getElementById("view");

view.start({
  name: "leaderboard",
  onInput: (args) => {
    state.input = args;
  },
  onResult: (result) => {
    let answer;
    try {
      answer = answerOf(result);
    } catch (error) {
      setContent(root(), errorBox(error));
      return;
    }
    if (Array.isArray(answer.benchmarks) || !answer.dataset) showOverview(answer, state.input);
    else showBoard(answer, state.input);
  },
  onWidth: () => {
    if (state.board) render();
  },
});

// -- loading --------------------------------------------------------------------------------------------------------

function boardArgs(query) {
  const args = { task: query.task, dataset: query.dataset, limit: PAGE_ROWS };
  if (query.metric) args.metric = query.metric;
  if (query.order) args.order = query.order;
  if (query.has_code === true || query.has_code === false) args.has_code = query.has_code;
  if (query.status) args.status = query.status;
  return args;
}

function showBoard(answer, input) {
  state.overview = null;
  state.board = answer;
  state.rows = answer.rows || [];
  state.error = null;
  state.tableRows = TABLE_FIRST;
  state.query = {
    task: input.task ?? answer.task,
    dataset: input.dataset ?? answer.dataset,
    metric: answer.metric,
    order: input.order,
    has_code: input.has_code,
    status: input.status,
  };
  render();
  // The host's answer is one page, of the size the model asked for: read the board from its start in pages of 50.
  if (answer.total > state.rows.length) loadBoard(state.query, { keepRows: true });
}

async function loadBoard(query, { keepRows = false } = {}) {
  const generation = ++state.generation;
  state.query = query;
  state.loading = true;
  state.error = null;
  if (!keepRows) {
    state.rows = [];
    state.tableRows = TABLE_FIRST;
  }
  render();
  const rows = [];
  let attribution = null;
  let anyHarvested = false;
  let cursor = null;
  try {
    do {
      const args = boardArgs(query);
      if (cursor) args.cursor = cursor;
      const page = await callTool("get_leaderboard", args);
      if (generation !== state.generation) return;
      rows.push(...(page.rows || []));
      // A page with harvested rows credits Code-with-Papers too: keep that credit while its rows are shown.
      const harvested = (page.rows || []).some((row) => row.harvest);
      if (attribution === null || (harvested && !anyHarvested)) attribution = page.attribution;
      anyHarvested ||= harvested;
      state.board = { ...page, attribution };
      state.query = { ...query, metric: page.metric };
      state.rows = rows.slice(); // the first page of 50 holds whatever page the host's answer showed
      cursor = page.next_cursor;
      render();
    } while (cursor && rows.length < MOST_ROWS);
  } catch (error) {
    if (generation !== state.generation) return;
    state.error = error;
  }
  state.loading = false;
  render();
}

function showOverview(answer, input) {
  state.overview = { task: answer.task, input, answer, benchmarks: answer.benchmarks || [] };
  state.board = null;
  renderOverview();
  // A cursor goes on only in pages of the size it was read in: a page of 50 is held and read on from, any other size
  // is read again from the start in pages of 50.
  if (answer.next_cursor) loadBenchmarks(input.limit === PAGE_ROWS ? answer : null);
}

async function loadBenchmarks(held) {
  const overview = state.overview;
  state.overviewLoading = true;
  renderOverview();
  try {
    const all = held ? [...(held.benchmarks || [])] : [];
    let next = held ? held.next_cursor : null;
    do {
      const args = { task: overview.task, limit: PAGE_ROWS };
      if (next) args.cursor = next;
      const page = await callTool("get_leaderboard", args);
      if (state.overview !== overview) return;
      all.push(...(page.benchmarks || []));
      next = page.next_cursor;
    } while (next && all.length < MOST_BENCHMARKS);
    overview.benchmarks = all;
  } catch (error) {
    overview.error = error;
  }
  state.overviewLoading = false;
  if (state.overview === overview && !state.board) renderOverview();
}

function openBoard(dataset) {
  const task = state.overview.task;
  state.board = { task, dataset, total: 0, rows: [] };
  state.rows = [];
  loadBoard({ task, dataset, metric: null, order: undefined, has_code: undefined, status: undefined });
}

async function openTask(task) {
  state.board = null;
  state.overview = null;
  setContent(root(), el("div", { class: "loading", text: `Loading ${task}…` }));
  try {
    const input = { task, limit: PAGE_ROWS };
    showOverview(await callTool("get_leaderboard", input), input);
  } catch (error) {
    setContent(root(), errorBox(error));
  }
}

// -- values ---------------------------------------------------------------------------------------------------------

// A number as typed, by core/metrics.py's rule (parse_value; tests/product/test_app_views.py runs both on one table):
// `88.5`, `88.5%`, `1.2M`, `12.3 ± 0.4`, `1,024`. White space and digits are spelled out there and here alike: the two
// languages' `\s` and `\d` differ.
const SPACE = String.raw`\s\x1c-\x1f\x85\ufeff`;
const NUMBER = new RegExp(
  String.raw`^[${SPACE}]*(?<sign>[-+\u2212]?)[${SPACE}]*` +
    String.raw`(?<digits>[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?|[0-9]+(?:\.[0-9]*)?|\.[0-9]+)` +
    String.raw`(?:[eE](?<exponent>[-+]?[0-9]{1,3}))?` +
    String.raw`[${SPACE}]*(?<magnitude>[kKMBGT](?![a-zA-Z]))?` +
    String.raw`[${SPACE}]*(?<percent>%?)` +
    String.raw`(?<rest>(?:[${SPACE}(\[*\u2020\u2021\u00b1/,;]|\+/?-)[\s\S]*)?$`,
);
const MAGNITUDE = { k: 1e3, K: 1e3, M: 1e6, B: 1e9, G: 1e9, T: 1e12 };
const MAX_VALUE_CHARS = 64; // core/metrics.py's: a longer value is not a number someone typed into a table

function parseValue(text) {
  if (typeof text !== "string" || [...text].length > MAX_VALUE_CHARS) return null; // in characters, as Python counts
  const found = NUMBER.exec(text)?.groups;
  if (!found) return null;
  let number = Number(found.digits.replaceAll(",", "") + (found.exponent ? `e${found.exponent}` : ""));
  if (found.magnitude) number *= MAGNITUDE[found.magnitude];
  if (found.sign === "-" || found.sign === "\u2212") number = -number;
  return Number.isFinite(number) ? { number, percent: found.percent === "%", magnitude: Boolean(found.magnitude) } : null;
}

function codeKind(row) {
  if (row.harvest && String(row.harvest.best_status || "").startsWith("ran")) return "ran";
  return row.code || row.harvest ? "code" : "none";
}

function metricIndex(board) {
  const at = (board.metrics || []).indexOf(board.metric);
  return at < 0 ? 0 : at;
}

function valueOf(row, board) {
  return (row.values || [])[metricIndex(board)] ?? "";
}

function lowerIsBetter(board) {
  return String(board.direction || "").startsWith("lower");
}

/** Whether the rows come worst first: an order asked against the metric's direction (the answer says which it read). */
function worstFirst(board) {
  return Boolean(board.order) && board.order !== (lowerIsBetter(board) ? "asc" : "desc");
}

/** The plotted points (rows with a date and a number), and the state of the art: in date order, each point that beats
 * every point before it in the metric's direction (on one day, the best of that day). */
function pointsOf(rows, board) {
  const lower = lowerIsBetter(board);
  const points = [];
  rows.forEach((row, index) => {
    const time = dayTime(row.paper?.date);
    const value = parseValue(valueOf(row, board));
    if (time !== null && value !== null) points.push({ row, index, time, value: value.number, parsed: value, kind: codeKind(row) });
  });
  const better = (a, b) => (lower ? a < b : a > b);
  const byDate = points.slice().sort((a, b) => a.time - b.time || (better(a.value, b.value) ? -1 : better(b.value, a.value) ? 1 : a.index - b.index));
  const sota = [];
  for (const point of byDate) {
    if (sota.length === 0 || better(point.value, sota[sota.length - 1].value)) sota.push(point);
  }
  return { points, sota };
}

// -- the chart ------------------------------------------------------------------------------------------------------

function niceStep(span, count) {
  const raw = span / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / magnitude;
  return (norm >= 7.5 ? 10 : norm >= 3.5 ? 5 : norm >= 1.5 ? 2 : 1) * magnitude;
}

function valueAxis(points, count) {
  let lo = Math.min(...points.map((p) => p.value));
  let hi = Math.max(...points.map((p) => p.value));
  if (lo === hi) {
    const pad = Math.abs(lo) * 0.05 || 1;
    lo -= pad;
    hi += pad;
  }
  const step = niceStep(hi - lo, count);
  const start = Math.floor(lo / step) * step;
  const end = Math.ceil(hi / step) * step;
  const ticks = [];
  for (let i = 0; start + i * step <= end + step * 1e-9; i++) ticks.push(Number((start + i * step).toPrecision(12)));
  const percent = points.filter((p) => p.parsed.percent).length * 2 > points.length;
  const compact = points.some((p) => p.parsed.magnitude) || Math.max(Math.abs(start), Math.abs(end)) >= 1e6;
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const format = new Intl.NumberFormat(view.locale, compact ? { notation: "compact", maximumFractionDigits: 2 } : { maximumFractionDigits: digits, minimumFractionDigits: digits });
  return { lo: start, hi: end, ticks, label: (v) => format.format(v) + (percent ? "%" : "") };
}

function timeAxis(points, width) {
  let lo = Math.min(...points.map((p) => p.time));
  let hi = Math.max(...points.map((p) => p.time));
  const day = 86_400_000;
  const pad = Math.max((hi - lo) * 0.03, 60 * day);
  lo -= pad;
  hi += pad;
  const most = Math.max(2, Math.floor(width / 42)); // a year label is about 30 px wide
  const first = new Date(lo).getUTCFullYear();
  const last = new Date(hi).getUTCFullYear();
  const ticks = [];
  if (last - first >= 2) {
    const every = [1, 2, 5, 10, 20].find((step) => (last - first) / step <= most) || 50;
    for (let year = Math.ceil(first / every) * every; year <= last; year += every) {
      const time = Date.UTC(year, 0, 1);
      if (time >= lo && time <= hi) ticks.push({ time, label: String(year) });
    }
  } else {
    const months = Math.max(1, Math.round((hi - lo) / (30 * day)));
    const every = [1, 2, 3, 6, 12].find((step) => months / step <= most) || 12;
    const format = new Intl.DateTimeFormat(view.locale, { month: "short", year: "2-digit", timeZone: "UTC" });
    const start = new Date(lo);
    for (let m = start.getUTCMonth() + 1; ; m += 1) {
      const time = Date.UTC(start.getUTCFullYear(), m, 1);
      if (time > hi) break;
      if (new Date(time).getUTCMonth() % every === 0) ticks.push({ time, label: format.format(new Date(time)) });
    }
  }
  return { lo, hi, ticks };
}

function chart(points, sota, width) {
  const narrow = width < NARROW_PX;
  const height = narrow ? 230 : 300;
  const y = valueAxis(points, narrow ? 4 : 6);
  const labelWidth = Math.max(...y.ticks.map((v) => y.label(v).length)) * 6.6 + 10;
  const margin = { top: 14, right: narrow ? 10 : 16, bottom: 26, left: Math.ceil(labelWidth) };
  const plotWidth = width - margin.left - margin.right;
  const x = timeAxis(points, plotWidth);
  const px = (time) => margin.left + ((time - x.lo) / (x.hi - x.lo)) * plotWidth;
  const py = (value) => margin.top + (1 - (value - y.lo) / (y.hi - y.lo)) * (height - margin.top - margin.bottom);
  const bottom = height - margin.bottom;

  const grid = svg("g", { class: "grid" });
  for (const value of y.ticks) {
    const at = py(value).toFixed(1);
    grid.append(
      svg("line", { attrs: { x1: margin.left, x2: width - margin.right, y1: at, y2: at } }),
      svg("text", { class: "tick", attrs: { x: margin.left - 8, y: at, dy: "0.32em", "text-anchor": "end" }, text: y.label(value) }),
    );
  }
  for (const tick of x.ticks) {
    const at = px(tick.time).toFixed(1);
    grid.append(
      svg("line", { class: "x", attrs: { x1: at, x2: at, y1: bottom, y2: bottom + 4 } }),
      svg("text", { class: "tick", attrs: { x: at, y: bottom + 16, "text-anchor": "middle" }, text: tick.label }),
    );
  }
  grid.append(svg("line", { class: "axis", attrs: { x1: margin.left, x2: width - margin.right, y1: bottom, y2: bottom } }));

  // The state of the art: flat until a result beats it, then a step to the new best; on to the chart's right edge.
  let d = "";
  sota.forEach((point, i) => {
    const at = `${px(point.time).toFixed(1)}`;
    const level = py(point.value).toFixed(1);
    d += i === 0 ? `M${at},${level}` : `H${at}V${level}`;
  });
  if (sota.length) d += `H${(width - margin.right).toFixed(1)}`;
  const line = svg("path", { class: "sota-line", attrs: { d, "data-steps": sota.length } });

  const dots = svg("g", { class: "points" });
  const onSota = new Set(sota);
  const order = { none: 0, code: 1, ran: 2 };
  for (const point of points.slice().sort((a, b) => order[a.kind] - order[b.kind] || onSota.has(a) - onSota.has(b))) {
    const value = valueOf(point.row, state.board);
    dots.append(
      svg(
        "circle",
        {
          class: `pt ${point.kind}${onSota.has(point) ? " sota" : ""}`,
          attrs: {
            cx: px(point.time).toFixed(1),
            cy: py(point.value).toFixed(1),
            r: onSota.has(point) ? (narrow ? 4.5 : 5) : narrow ? 3.2 : 3.6,
            "data-row": point.index,
            "data-kind": point.kind,
          },
          on: { click: () => showRow(point.index) },
        },
        svg("title", { text: `${point.row.model || "(no model name)"}: ${value} · ${formatDate(point.row.paper?.date)} · ${CODE_KINDS[point.kind]}` }),
      ),
    );
  }

  const best = sota[sota.length - 1];
  const labels = svg("g", { class: "labels" });
  if (best && best.row.model) {
    const bx = px(best.time);
    const text = best.row.model.length > 28 ? `${best.row.model.slice(0, 27)}…` : best.row.model;
    const right = bx > width - margin.right - text.length * 6.6 - 12;
    labels.append(
      svg("text", {
        class: "best-label",
        attrs: { x: (right ? bx - 9 : bx + 9).toFixed(1), y: py(best.value).toFixed(1), dy: lowerIsBetter(state.board) ? "1.1em" : "-0.55em", "text-anchor": right ? "end" : "start" },
        text,
      }),
    );
  }

  return svg(
    "svg",
    {
      class: "chart",
      attrs: { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `${points.length} results over time; the state of the art in ${sota.length} steps` },
    },
    grid,
    line,
    dots,
    labels,
  );
}

function legend() {
  return el(
    "div",
    { class: "legend" },
    ...Object.entries(CODE_KINDS).map(([kind, label]) => el("span", { class: `mark ${kind}` }, el("i"), label)),
    el("span", { class: "mark sota" }, el("i"), "state of the art"),
  );
}

function showRow(index) {
  state.tableRows = Math.max(state.tableRows, index + 1);
  render();
  const row = root().querySelector(`tr[data-row="${index}"]`);
  if (row) {
    row.scrollIntoView({ block: "nearest", behavior: "smooth" });
    row.classList.add("flash");
    setTimeout(() => row.classList.remove("flash"), 1400);
  }
}

// -- the board ------------------------------------------------------------------------------------------------------

function render() {
  const board = state.board;
  if (!board) return;
  const { points, sota } = pointsOf(state.rows, board);
  const width = Math.max(260, (root().clientWidth || view.width) - (view.narrow ? 24 : 36));
  const parts = [header(board), controls(board)];
  if (state.error) parts.push(errorBox(state.error));
  if (points.length) parts.push(el("div", { class: "chart-box" }, chart(points, sota, width)), legend());
  else if (!state.loading) parts.push(el("div", { class: "empty", text: state.rows.length ? "No result here has both a date and a number to plot." : "No results." }));
  parts.push(statusLine(points));
  if (state.rows.length) parts.push(table(board), moreButtons());
  if (board.note) parts.push(el("div", { class: "note", text: board.note }));
  parts.push(footer(board));
  setContent(root(), parts);
}

function header(board) {
  const back = state.overview
    ? el("button", { class: "link", text: `← ${state.overview.task}`, on: { click: () => backToOverview() } })
    : el("span", { text: board.task || state.query?.task || "" });
  const direction = board.direction ? el("span", { class: "sep", text: board.direction }) : null;
  return el(
    "header",
    {},
    el("div", { class: "eyebrow" }, back),
    el("h1", { text: board.dataset || state.query?.dataset || "" }),
    el("div", { class: "meta" }, el("span", { text: plural(board.total || 0, "result") }), direction),
  );
}

function backToOverview() {
  state.generation++;
  state.board = null;
  state.loading = false;
  renderOverview();
}

function controls(board) {
  const metrics = [...(board.metrics || []), ...(board.other_metrics || [])];
  const parts = [];
  if (metrics.length) {
    // An order asked for one metric is not one for another: the metric picked is read best first.
    const select = el(
      "select",
      { attrs: { id: "metric", "aria-label": "Metric" }, on: { change: (event) => loadBoard({ ...state.query, metric: event.target.value, order: undefined }) } },
      ...metrics.map((name) => el("option", { text: name, attrs: { value: name, selected: name === board.metric } })),
    );
    parts.push(el("div", { class: "control" }, el("label", { text: "Metric", attrs: { for: "metric" } }), select));
  }
  const current = state.query?.has_code;
  const choice = (label, value) =>
    el("button", {
      text: label,
      attrs: { type: "button", "aria-pressed": current === value || (value === undefined && current !== true && current !== false) ? "true" : "false", "data-has-code": String(value) },
      on: { click: () => loadBoard({ ...state.query, has_code: value }) },
    });
  parts.push(
    el(
      "div",
      { class: "control" },
      el("span", { class: "label", text: "Code" }),
      el("div", { class: "segmented", attrs: { role: "group", "aria-label": "Code" } }, choice("All", undefined), choice("With code", true), choice("Without", false)),
    ),
  );
  if (worstFirst(board)) {
    parts.push(
      el(
        "span",
        { class: "chip order" },
        "worst first, as asked",
        el("button", { class: "link", text: "×", title: "Show the best first", attrs: { "aria-label": "Show the best first" }, on: { click: () => loadBoard({ ...state.query, order: undefined }) } }),
      ),
    );
  }
  if (state.query?.status) {
    const status = Array.isArray(state.query.status) ? state.query.status.join(", ") : state.query.status;
    parts.push(
      el(
        "span",
        { class: "chip" },
        `harvested: ${status}`,
        el("button", { class: "link", text: "×", title: "Show every row", attrs: { "aria-label": "Remove the status filter" }, on: { click: () => loadBoard({ ...state.query, status: undefined }) } }),
      ),
    );
  }
  return el("div", { class: "controls" }, ...parts);
}

function statusLine(points) {
  const total = state.board.total || 0;
  const have = state.rows.length;
  let text;
  if (state.loading) text = `Loading… ${formatCount(have)} of ${formatCount(Math.min(total, MOST_ROWS))} results`;
  else if (total > have && have >= MOST_ROWS) text = `${plural(total, "result")}: the chart and the table hold the ${worstFirst(state.board) ? "worst" : "best"} ${formatCount(have)}.`;
  else if (total > have) text = `Showing ${formatCount(have)} of ${plural(total, "result")}.`;
  else text = have ? `All ${plural(have, "result")}.` : "";
  const unplotted = have - points.length;
  if (unplotted > 0 && have) text += ` ${formatCount(unplotted)} without a date or a number ${unplotted === 1 ? "is" : "are"} not plotted.`;
  return el("div", { class: `status-line${state.loading ? " loading" : ""}`, text });
}

function table(board) {
  const metric = board.metric || "Value";
  // Narrow, the code mark goes under the value: the model's column keeps the room.
  const head = el("tr", {}, el("th", { text: "#" }), el("th", { text: "Model" }), el("th", { class: "num", text: metric }), view.narrow ? null : el("th", { text: "Code" }));
  const body = el("tbody");
  state.rows.slice(0, state.tableRows).forEach((row, index) => body.append(tableRow(row, index, board)));
  return el("div", { class: "table-wrap" }, el("table", {}, el("thead", {}, head), body));
}

function tableRow(row, index, board) {
  const paper = row.paper || {};
  const kind = codeKind(row);
  const title = paper.arxiv_id ? link(`https://arxiv.org/abs/${encodeURIComponent(paper.arxiv_id).replaceAll("%2F", "/")}`, paper.title || paper.arxiv_id) : el("span", { text: paper.title || "" });
  const sub = el("div", { class: "cell-sub" }, title, paper.date ? el("span", { class: "sep", text: formatDate(paper.date) }) : null);
  const repo = row.code
    ? el(
        "div",
        { class: "cell-sub" },
        link(row.code.repo, repoLabel(row.code.repo)),
        row.code.official ? el("span", { class: "badge tag official", text: "official", attrs: { style: "margin-left:6px" } }) : null,
        row.code.more ? el("span", { class: "faint", text: ` +${row.code.more}` }) : null,
      )
    : null;
  const values = (board.metrics || []).map((name, i) => `${name}: ${(row.values || [])[i] || "—"}`).join("\n");
  const harvest = row.harvest ? `${plural(row.harvest.samples, "harvested sample")}, best ${row.harvest.best_status}` : CODE_KINDS[kind];
  const mark = el("span", { class: `mark ${kind}`, title: harvest }, el("i"), kind);
  return el(
    "tr",
    { attrs: { "data-row": index } },
    el("td", { class: "rank", text: row.rank ?? "–" }),
    el(
      "td",
      {},
      el("div", { class: "cell-title" }, row.model || "(no model name)", row.extra_data ? el("span", { class: "badge tag", text: "extra data", title: "trained with additional data", attrs: { style: "margin-left:6px" } }) : null),
      sub,
      repo,
    ),
    el("td", { class: "num", title: values }, el("div", { class: "value", text: valueOf(row, board) || "—" }), view.narrow ? el("div", { class: "cell-sub" }, mark) : null),
    view.narrow ? null : el("td", {}, mark),
  );
}

function moreButtons() {
  const left = state.rows.length - state.tableRows;
  if (left <= 0) return null;
  const step = Math.min(TABLE_STEP, left);
  return el(
    "div",
    { class: "more" },
    el("button", { text: `Show ${formatCount(step)} more`, on: { click: () => ((state.tableRows += step), render()) } }),
    left > step ? el("button", { text: `Show all ${formatCount(state.rows.length)}`, on: { click: () => ((state.tableRows = state.rows.length), render()) } }) : null,
  );
}

// -- a task's benchmarks --------------------------------------------------------------------------------------------

function renderOverview() {
  const overview = state.overview;
  if (!overview) return;
  const answer = overview.answer;
  const head = el(
    "header",
    {},
    el("div", { class: "eyebrow", text: "Task" }),
    el("h1", { text: overview.task }),
    el("div", { class: "meta", text: `${plural(answer.total || 0, "benchmark")}${answer.total ? ": open one to see its results over time" : ""}` }),
  );
  const parts = [head];
  if (overview.benchmarks.length) {
    const body = el("tbody");
    for (const benchmark of overview.benchmarks) {
      body.append(
        el(
          "tr",
          { attrs: { "data-dataset": benchmark.dataset } },
          el(
            "td",
            {},
            el("div", { class: "cell-title" }, el("button", { class: "link", text: benchmark.dataset, on: { click: () => openBoard(benchmark.dataset) } })),
            el("div", { class: "cell-sub", text: (benchmark.metrics || []).join(" · ") }),
          ),
          el("td", { class: "num", text: formatCount(benchmark.rows || 0) }),
          el("td", {}, el("div", { text: benchmark.best || "—" }), benchmark.metrics?.length ? el("div", { class: "cell-sub", text: `by ${benchmark.metrics[0]}` }) : null),
        ),
      );
    }
    const head = el("tr", {}, el("th", { text: "Benchmark" }), el("th", { class: "num", text: "Results" }), el("th", { text: "Best" }));
    parts.push(el("div", { class: "table-wrap" }, el("table", { class: "benchmarks" }, el("thead", {}, head), body)));
  } else {
    parts.push(el("div", { class: "empty", text: "This task has no benchmark with results." }));
  }
  if (state.overviewLoading) parts.push(el("div", { class: "status-line loading", text: "Loading the other benchmarks…" }));
  else if (overview.benchmarks.length < (answer.total || 0)) {
    const text = `Showing ${formatCount(overview.benchmarks.length)} of ${plural(answer.total, "benchmark")}, those with the most results.`;
    parts.push(el("div", { class: "status-line", text }));
  }
  if (overview.error) parts.push(errorBox(overview.error));
  if (answer.subtasks?.length) {
    parts.push(
      el("h2", { text: "Subtasks" }),
      el("div", { class: "chips" }, ...answer.subtasks.map((name) => el("button", { class: "chip", text: name, on: { click: () => openTask(name) } }))),
    );
  }
  if (answer.note) parts.push(el("div", { class: "note", text: answer.note }));
  parts.push(footer(answer));
  setContent(root(), parts);
}
