// The paper card: title, authors, date and links; the repositories, official first; the harvested samples by
// repository and file (get_harvested_code_for_paper, called through the host: get_paper holds only their counts), each
// status a badge, with a legend; a sample's code opened in the card through get_code where its licence allows, with
// its licence and origin, or the reason it is withheld. A pointer-only sample is marked, and its code never asked for.
// A list of ids: each paper in brief, opened on a click.

const SAMPLE_PAGE = 100; // get_harvested_code_for_paper's largest page
const MOST_SAMPLES = 500;
const AUTHORS_SHOWN = 12;
const ABSTRACT_SHORT_CHARS = 320; // a longer abstract shows its first lines, and "More"

const card = {
  paper: null, // get_paper's answer for one paper
  list: null, // get_paper's answer for a list of ids, while it is shown (or a paper opened from it)
  harvest: null, // {groups, answer, shown, loading, error}
  codes: new Map(), // code_sha256 -> {open, loading, answer, error}
  abstractOpen: false,
  legendOpen: null, // null: open unless the view is narrow
};

const root = () => document.getElementById("view");

view.start({
  name: "paper",
  onInput: () => {},
  onResult: (result) => {
    try {
      const answer = answerOf(result);
      if (Array.isArray(answer.papers)) showList(answer);
      else showPaper(answer, null);
    } catch (error) {
      setContent(root(), errorBox(error));
    }
  },
});

function paperKey(paper) {
  return paper.arxiv_id || paper.slug;
}

function showPaper(answer, list) {
  card.paper = answer;
  card.list = list;
  card.harvest = null;
  card.codes = new Map();
  card.abstractOpen = false;
  render();
  if (answer.samples?.total) loadHarvest(answer);
}

async function openPaper(id) {
  const list = card.list;
  setContent(root(), el("div", { class: "loading", text: "Loading the paper…" }));
  try {
    showPaper(await callTool("get_paper", { paper: id }), list);
  } catch (error) {
    setContent(root(), errorBox(error));
  }
}

// -- the harvested samples ------------------------------------------------------------------------------------------

/** Every field of a repository's group but its files: groups of two pages with the same fields are one. */
function groupKey(group) {
  return JSON.stringify([group.repo, group.repo_kind, group.language ?? null, group.licence ?? null, group.inline_ok ?? true]);
}

async function loadHarvest(paper) {
  const harvest = { groups: new Map(), answer: null, shown: 0, loading: true, error: null };
  card.harvest = harvest;
  render();
  let cursor = null;
  try {
    do {
      const args = { arxiv_id: paperKey(paper), limit: SAMPLE_PAGE };
      if (cursor) args.cursor = cursor;
      const page = await callTool("get_harvested_code_for_paper", args);
      if (card.harvest !== harvest) return;
      harvest.answer = page;
      for (const group of page.samples || []) {
        const key = groupKey(group);
        const known = harvest.groups.get(key) || { ...group, files: {} };
        for (const [path, samples] of Object.entries(group.files || {})) {
          known.files[path] = [...(known.files[path] || []), ...samples];
          harvest.shown += samples.length;
        }
        harvest.groups.set(key, known);
      }
      cursor = page.next_cursor;
      render();
    } while (cursor && harvest.shown < MOST_SAMPLES);
  } catch (error) {
    if (card.harvest !== harvest) return;
    harvest.error = error;
  }
  harvest.loading = false;
  render();
}

async function toggleCode(sha) {
  const known = card.codes.get(sha);
  if (known) {
    known.open = !known.open;
    render();
    return;
  }
  const entry = { open: true, loading: true, answer: null, error: null };
  card.codes.set(sha, entry);
  render();
  try {
    entry.answer = await callTool("get_code", { code_sha256: sha });
  } catch (error) {
    entry.error = error;
  }
  entry.loading = false;
  render();
}

// -- rendering ------------------------------------------------------------------------------------------------------

function render() {
  const paper = card.paper;
  if (!paper) return;
  setContent(root(), header(paper), abstract(paper), repositories(paper), harvested(paper), results(paper), footer(paper));
}

function header(paper) {
  const back = card.list ? el("button", { class: "link", text: `← ${plural(card.list.papers.length, "paper")}`, on: { click: () => showList(card.list) } }) : null;
  const eyebrow = [paper.arxiv_id ? `arXiv ${paper.arxiv_id}` : paper.slug, paper.proceeding].filter(Boolean);
  const authors = paper.authors || [];
  const shown = authors.slice(0, AUTHORS_SHOWN).join(", ");
  const others = Math.max(paper.n_authors || authors.length, authors.length) - Math.min(authors.length, AUTHORS_SHOWN);
  const links = el(
    "div",
    { class: "links" },
    paper.url_abs ? link(paper.url_abs, "Abstract", { class: "button-link" }) : null,
    paper.url_pdf ? link(paper.url_pdf, "PDF", { class: "button-link" }) : null,
  );
  return el(
    "header",
    {},
    back ? el("div", { class: "eyebrow" }, back) : null,
    el("div", { class: "eyebrow", text: eyebrow.join(" · ") }),
    el("h1", { text: paper.title || "(untitled)" }),
    authors.length ? el("div", { class: "authors", text: others > 0 ? `${shown} and ${plural(others, "other")}` : shown }) : null,
    el("div", { class: "meta" }, paper.date ? el("span", { text: formatDate(paper.date) }) : null, links.childNodes.length ? links : null),
    paper.tasks?.length ? el("div", { class: "chips" }, ...paper.tasks.map((task) => el("span", { class: "chip", text: task }))) : null,
  );
}

function abstract(paper) {
  if (!paper.abstract) return null;
  const long = paper.abstract.length > ABSTRACT_SHORT_CHARS;
  const text = el("p", { class: `abstract${card.abstractOpen || !long ? " open" : ""}`, text: paper.abstract });
  const toggle = !long ? null : el("button", {
    class: "link",
    text: card.abstractOpen ? "Less" : "More",
    on: { click: () => ((card.abstractOpen = !card.abstractOpen), render()) },
  });
  return el("section", { class: "abstract-box" }, text, toggle);
}

function repositories(paper) {
  const linksOf = paper.code_links || [];
  if (!linksOf.length) return el("section", {}, el("h2", { text: "Repositories" }), el("div", { class: "empty", text: "No repository is linked to this paper." }));
  const items = linksOf.map((repo) =>
    el(
      "li",
      { class: "repo" },
      link(repo.repo, repoLabel(repo.repo), { class: "repo-name" }),
      repo.official ? el("span", { class: "badge tag official", text: "official" }) : null,
      repo.framework && repo.framework !== "none" ? el("span", { class: "faint", text: repo.framework }) : null,
      repo.licence ? el("span", { class: "faint", text: repo.licence }) : null,
      repo.reach && repo.reach !== "ok" ? el("span", { class: "faint", text: repo.reach }) : null,
    ),
  );
  const more = paper.more_code_links ? el("li", { class: "faint", text: `and ${plural(paper.more_code_links, "other")}` }) : null;
  return el("section", {}, el("h2", { text: `Repositories (${formatCount(linksOf.length + (paper.more_code_links || 0))})` }), el("ul", { class: "repos" }, ...items, more));
}

function harvested(paper) {
  const counts = paper.samples;
  const title = el("h2", { text: "Harvested code" });
  if (!counts?.total) return el("section", {}, title, el("div", { class: "empty", text: "No code has been harvested for this paper." }));
  const summary = el(
    "div",
    { class: "summary" },
    el("span", { text: `${plural(counts.total, "sample")}` }),
    ...Object.entries(counts.by_status || {}).map(([status, n]) => el("span", { class: "count" }, statusBadge(status), ` ${formatCount(n)}`)),
    counts.pointer_only ? el("span", { class: "count" }, el("span", { class: "badge tag pointer", text: "link only" }), ` ${formatCount(counts.pointer_only)}`) : null,
  );
  const parts = [title, summary, statusLegend(paper)];
  const harvest = card.harvest;
  if (harvest) {
    for (const group of harvest.groups.values()) parts.push(repoGroup(group));
    if (harvest.loading) parts.push(el("div", { class: "loading", text: "Loading the samples…" }));
    if (harvest.error) parts.push(errorBox(harvest.error));
    const total = harvest.answer?.counts?.total ?? counts.total;
    if (!harvest.loading && harvest.shown < total) parts.push(el("div", { class: "status-line", text: `Showing ${formatCount(harvest.shown)} of ${plural(total, "sample")}, best first.` }));
  }
  return el("section", { class: "harvest" }, ...parts);
}

function statusLegend(paper) {
  const rows = STATUSES.flatMap(([status, meaning]) => [el("dt", {}, statusBadge(status)), el("dd", { text: meaning })]);
  rows.push(el("dt", {}, el("span", { class: "badge tag pointer", text: "link only" })), el("dd", { text: "its licence does not allow showing the code here: follow the link" }));
  return el(
    "details",
    { class: "legend-box", attrs: { open: card.legendOpen ?? !view.narrow }, on: { toggle: (event) => (card.legendOpen = event.target.open) } },
    el("summary", { text: "What the statuses mean" }),
    el("dl", { class: "legend-list" }, ...rows),
    paper.claim ? el("p", { class: "claim", text: paper.claim }) : null,
  );
}

/** A file's page on GitHub, for a repository named `owner/name`; null elsewhere. */
function fileUrl(repo, path) {
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo) || typeof path !== "string") return null;
  const parts = path.split("/").map((part) => encodeURIComponent(part));
  return `https://github.com/${repo}/blob/HEAD/${parts.join("/")}`;
}

function repoGroup(group) {
  const pointerOnly = group.inline_ok === false;
  const repoUrl = /^[\w.-]+\/[\w.-]+$/.test(group.repo) ? `https://github.com/${group.repo}` : null;
  const head = el(
    "div",
    { class: "group-head" },
    repoUrl ? link(repoUrl, group.repo, { class: "repo-name" }) : el("span", { class: "repo-name", text: group.repo }),
    el("span", { class: `badge tag${group.repo_kind === "official" ? " official" : ""}`, text: group.repo_kind }),
    group.licence ? el("span", { class: "faint", text: group.licence === "NONE" ? "no licence found" : group.licence }) : null,
    pointerOnly ? el("span", { class: "badge tag pointer", text: "link only", title: "its licence does not allow showing the code" }) : null,
  );
  const files = Object.entries(group.files || {}).map(([path, samples]) =>
    el(
      "div",
      { class: "file" },
      el("div", { class: "file-path" }, fileUrl(group.repo, path) ? link(fileUrl(group.repo, path), path, { class: "mono" }) : el("span", { class: "mono", text: path })),
      el("ul", { class: "samples" }, ...samples.map((sample) => sampleItem(sample, pointerOnly, group, path))),
    ),
  );
  return el("div", { class: `group${pointerOnly ? " pointer-only" : ""}`, attrs: { "data-repo": group.repo } }, head, ...files);
}

function sampleItem(sample, pointerOnly, group, path) {
  const code = card.codes.get(sample.code_sha256);
  const file = fileUrl(group.repo, path);
  const action = pointerOnly
    ? file
      ? link(file, "Open the file", { class: "small", title: "link only: its licence does not allow showing the code here" })
      : el("span", { class: "faint small", text: "link only" })
    : el("button", {
        class: "small",
        text: code?.open ? "Hide code" : "Show code",
        attrs: { type: "button", "aria-expanded": code?.open ? "true" : "false", "data-sha": sample.code_sha256 },
        on: { click: () => toggleCode(sample.code_sha256) },
      });
  return el(
    "li",
    { class: "sample", attrs: { "data-sha": sample.code_sha256, "data-status": sample.status || "", "data-pointer-only": pointerOnly ? "true" : null } },
    el(
      "div",
      { class: "sample-line" },
      el("span", { class: "entry mono", text: sample.entry }),
      sample.status ? statusBadge(sample.status) : null,
      sample.stored ? el("span", { class: "faint small", text: "ready", title: "its verified code is stored: one call away" }) : null,
      el("span", { class: "spacer" }),
      action,
    ),
    !pointerOnly && code?.open ? codePanel(code, group, path) : null,
  );
}

function codePanel(entry, group, path) {
  if (entry.loading) return el("div", { class: "code-panel loading", text: "Asking get_code…" });
  if (entry.error) return el("div", { class: "code-panel" }, errorBox(entry.error));
  const answer = entry.answer || {};
  const origin = [answer.repo || group.repo, answer.path || path].filter(Boolean).join(" · ");
  const facts = el(
    "div",
    { class: "code-facts" },
    el("span", {}, "licence ", el("strong", { text: answer.licence || group.licence || "unknown" })),
    el("span", { class: "sep", text: `from ${origin}` }),
    answer.verified ? el("span", { class: "sep", text: `verified by its hash (${answer.source === "fetched" ? "downloaded" : "stored"})` }) : null,
  );
  if (answer.code) {
    return el(
      "div",
      { class: "code-panel" },
      facts,
      el("pre", { class: "code" }, el("code", { text: answer.code })),
      answer.requires?.length ? el("div", { class: "faint small", text: `needs ${answer.requires.join(", ")}` }) : null,
    );
  }
  return el(
    "div",
    { class: "code-panel" },
    facts,
    el("div", { class: "withheld" }, el("strong", { text: "Withheld: " }), answer.note || answer.withheld || "get_code gave no code"),
  );
}

function results(paper) {
  if (!paper.results?.length) return null;
  const body = el("tbody");
  for (const result of paper.results) {
    const values = Object.entries(result.values || {}).map(([metric, value]) => `${metric}: ${value}`);
    body.append(
      el(
        "tr",
        {},
        el("td", {}, el("div", { class: "cell-title", text: result.dataset }), el("div", { class: "cell-sub", text: result.task })),
        el("td", {}, el("div", { text: result.model || "" }), el("div", { class: "cell-sub", text: values.join(" · ") })),
        el("td", { class: "num", text: result.rank ? `${formatCount(result.rank)} of ${formatCount(result.of)}` : `of ${formatCount(result.of)}` }),
      ),
    );
  }
  const head = el("tr", {}, el("th", { text: "Benchmark" }), el("th", { text: "Model and results" }), el("th", { class: "num", text: "Rank" }));
  const more = paper.more_results ? el("div", { class: "status-line", text: `and ${plural(paper.more_results, "other result")}` }) : null;
  return el("section", {}, el("h2", { text: "On leaderboards" }), el("div", { class: "table-wrap" }, el("table", {}, el("thead", {}, head), body)), more);
}

// -- a list of ids --------------------------------------------------------------------------------------------------

function showList(answer) {
  card.paper = null;
  card.list = answer;
  const items = answer.papers.map((entry) => {
    if (entry.error) return el("li", { class: "brief" }, el("div", { class: "cell-title", text: entry.asked || "" }), el("div", { class: "error", text: `${entry.error}${entry.note ? `: ${entry.note}` : ""}` }));
    const id = paperKey(entry);
    const facts = [entry.date ? formatDate(entry.date) : null, (entry.authors || []).slice(0, 3).join(", "), entry.samples?.total ? plural(entry.samples.total, "sample") : null].filter(Boolean);
    return el(
      "li",
      { class: "brief" },
      el("div", { class: "cell-title" }, el("button", { class: "link", text: entry.title || id, on: { click: () => openPaper(id) } })),
      el("div", { class: "cell-sub", text: facts.join(" · ") }),
    );
  });
  const left = answer.left_out ? el("div", { class: "note", text: `${plural(answer.left_out, "id")} at the end not answered${answer.note ? `: ${answer.note}` : ""}` }) : null;
  setContent(root(), el("header", {}, el("h1", { text: plural(answer.papers.length, "paper") })), el("ul", { class: "briefs" }, ...items), left, footer(answer.papers.find((entry) => entry.attribution) || answer));
}
