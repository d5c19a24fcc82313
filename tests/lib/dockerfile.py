"""A Dockerfile reader that follows Docker's own rules (parser directives,
escape character, comments inside continuations, exec form as JSON) closely
enough to tell a real instruction from a typo and to pull out the exact
HEALTHCHECK argv that Docker would run. Shared by tests/integration and
tests/container. Raises DockerfileError naming the line for anything Docker
itself would reject."""
import json
import re
from dataclasses import dataclass, field

# Every instruction of the Dockerfile reference (MAINTAINER is deprecated but
# still parsed by Docker).
KNOWN_INSTRUCTIONS = {
    "ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM",
    "HEALTHCHECK", "LABEL", "MAINTAINER", "ONBUILD", "RUN", "SHELL",
    "STOPSIGNAL", "USER", "VOLUME", "WORKDIR",
}
HEALTHCHECK_OPTIONS = {"interval", "timeout", "start-period", "start-interval", "retries"}
DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class DockerfileError(ValueError):
    pass


@dataclass
class Instruction:
    name: str          # upper case
    args: str          # everything after the instruction word, continuations joined
    line: int          # first line, 1-based
    flags: dict = field(default_factory=dict)   # --name=value before the arguments
    rest: str = ""     # args without the flags

    def exec_form(self, text=None):
        """The JSON array of the exec form, or None for the shell form."""
        text = (self.rest if text is None else text).strip()
        if not text.startswith("["):
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise DockerfileError(f"line {self.line}: {self.name}: exec form is not a JSON array: {e}")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DockerfileError(f"line {self.line}: {self.name}: exec form must be an array of strings")
        return value


@dataclass
class Healthcheck:
    line: int
    options: dict      # name -> seconds (durations) or int (retries)
    argv: list         # exec form argv, or None with NONE
    shell: str = None  # the command of the shell form


def parse_duration(text):
    """Go's time.ParseDuration, which Docker uses for HEALTHCHECK options."""
    if text == "0":
        return 0.0
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", text)
    if not text or "".join(n + u for n, u in parts) != text:
        raise DockerfileError(f"'{text}' is not a duration (such as 30s, 1m30s, 500ms)")
    return sum(float(n) * DURATION_UNITS[u] for n, u in parts)


def _split_flags(inst):
    rest = inst.args
    flags = {}
    while True:
        m = re.match(r"\s*--([a-z][a-z-]*)(?:=(\S*))?(?=\s|$)", rest)
        if not m:
            break
        flags[m.group(1)] = m.group(2) if m.group(2) is not None else ""
        rest = rest[m.end():]
    inst.flags = flags
    inst.rest = rest.strip()


def parse(text):
    """Returns the list of instructions of a Dockerfile's text."""
    lines = text.split("\n")
    escape = "\\"
    i = 0
    # Parser directives: `# key=value` lines before anything else.
    while i < len(lines):
        m = re.match(r"^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.*?)\s*$", lines[i])
        if not m:
            break
        key, value = m.group(1).lower(), m.group(2)
        if key == "escape":
            if value not in ("\\", "`"):
                raise DockerfileError(f"line {i + 1}: escape must be \\ or `, not {value!r}")
            escape = value
        elif key not in ("syntax", "check"):
            break  # not a directive: an ordinary comment
        i += 1
    out = []
    current, start = None, 0
    for n in range(i, len(lines)):
        raw = lines[n].rstrip("\r")
        stripped = raw.strip()
        if stripped.startswith("#"):
            continue  # comments vanish, even inside a continued instruction
        if not stripped:
            continue  # blank lines never end a continued instruction either
        if current is None:
            current, start = "", n + 1
        cont = re.search(re.escape(escape) + r"\s*$", raw)
        current += (raw[:cont.start()] if cont else raw) + (" " if cont else "")
        if cont:
            continue
        out.append(_instruction(current, start))
        current = None
    if current is not None:  # a continuation at the end of the file: Docker accepts it
        out.append(_instruction(current, start))
    if not out or out[0].name not in ("FROM", "ARG"):
        raise DockerfileError("a Dockerfile must start with FROM (or ARG before FROM)")
    return out


def _instruction(text, line):
    m = re.match(r"\s*(\S+)\s*(.*)$", text, re.S)
    word = m.group(1)
    if word.upper() not in KNOWN_INSTRUCTIONS:
        raise DockerfileError(f"line {line}: unknown instruction '{word}'")
    inst = Instruction(name=word.upper(), args=m.group(2).strip(), line=line)
    if not inst.args:
        raise DockerfileError(f"line {line}: {inst.name} needs arguments")
    if inst.name in ("RUN", "COPY", "ADD", "FROM", "HEALTHCHECK"):
        _split_flags(inst)
    else:
        inst.rest = inst.args
    if inst.name in ("CMD", "ENTRYPOINT", "SHELL", "RUN", "VOLUME", "COPY", "ADD"):
        inst.exec_form()  # a broken JSON array is an error, as in Docker
    if inst.name == "SHELL" and inst.exec_form() is None:
        raise DockerfileError(f"line {line}: SHELL requires the JSON form")
    if inst.name == "HEALTHCHECK":
        healthcheck(inst)
    return inst


def healthcheck(inst):
    """Parses a HEALTHCHECK instruction the way Docker does."""
    if inst.rest.upper() == "NONE":
        if inst.flags:
            raise DockerfileError(f"line {inst.line}: HEALTHCHECK NONE takes no options")
        return Healthcheck(inst.line, {}, None)
    options = {}
    for name, value in inst.flags.items():
        if name not in HEALTHCHECK_OPTIONS:
            raise DockerfileError(f"line {inst.line}: HEALTHCHECK: unknown option --{name}")
        try:
            if name == "retries":
                if not re.fullmatch(r"\d+", value):
                    raise DockerfileError(f"'{value}' is not a whole number")
                options[name] = int(value)
            else:
                options[name] = parse_duration(value)
        except DockerfileError as e:
            raise DockerfileError(f"line {inst.line}: HEALTHCHECK --{name}: {e}")
    m = re.match(r"CMD\s+(.*)$", inst.rest, re.S | re.I)
    if not m:
        raise DockerfileError(f"line {inst.line}: HEALTHCHECK wants [OPTIONS] CMD command, or NONE")
    argv = inst.exec_form(m.group(1))
    if argv is not None and not argv:
        raise DockerfileError(f"line {inst.line}: HEALTHCHECK CMD has an empty command")
    return Healthcheck(inst.line, options, argv, None if argv is not None else m.group(1).strip())


def stages(instructions):
    """Splits the instructions into build stages (lists starting at FROM)."""
    result = []
    for inst in instructions:
        if inst.name == "FROM":
            result.append([inst])
        elif result:
            result[-1].append(inst)
    return result


def final_healthcheck(instructions):
    """The HEALTHCHECK in effect in the final stage (the last one wins)."""
    found = [i for i in stages(instructions)[-1] if i.name == "HEALTHCHECK"]
    return healthcheck(found[-1]) if found else None


def env_of(inst):
    """ENV key=value pairs (or the legacy `ENV key value`) as a dict."""
    import shlex
    words = shlex.split(inst.rest)
    if words and "=" not in words[0]:
        return {words[0]: inst.rest.split(None, 1)[1] if len(words) > 1 else ""}
    return dict(w.split("=", 1) for w in words)


def arg_defaults(stage):
    """ARG name=default of a stage, as a dict (no default: None)."""
    out = {}
    for inst in stage:
        if inst.name == "ARG":
            name, _, value = inst.rest.partition("=")
            out[name.strip()] = value.strip().strip('"') if _ else None
    return out
