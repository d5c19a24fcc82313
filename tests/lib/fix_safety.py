"""The dangerous-command check every fix text gpugate prints goes through
(tests/integration/conftest.py records them; the container tests check the
HEALTHCHECK output Docker keeps). A fix is pasted by a person in a hurry, so
none may destroy data or the host: no recursive ownership or mode change of
/ or of a top-level folder, no recursive rm, no file system made, no raw
write to a device, no script piped from the network into a shell."""
import re

# Ends the words of one command inside a fix text: shell separators and the
# prose gpugate puts after a command ("   (on the host; ...)").
_END = re.compile(r"^(&&|\|\||;|\||\(.*|.*[;)]$)")


def _words_after(text, start):
    """The words of the command that starts at index start, up to its end."""
    out = []
    for w in text[start:].split()[1:]:
        if _END.match(w):
            if w.endswith((";", ")")) and not w.startswith("("):
                out.append(w.rstrip(";)"))
            break
        out.append(w)
    return out


def _shallow(path):
    """True for /, a top-level folder (/home, /var), $HOME or ~ alone, or a
    path climbing with '..': too much for a recursive change."""
    p = path.strip("'\"")
    if p in ("~", "$HOME", "${HOME}", "*", ".") or ".." in p.split("/"):
        return True
    if not p.startswith("/"):
        return False
    parts = [x for x in p.split("/") if x]
    return len(parts) <= 1


def problems(fix):
    """Why the fix text is dangerous to paste ([] when it is not)."""
    found = []
    for m in re.finditer(r"(?<![\w.-])(chown|chmod|chgrp|rm)(?=\s)", fix):
        cmd = m.group(1)
        words = _words_after(fix, m.start())
        opts = [w for w in words if w.startswith("-")]
        recursive = any(o in ("--recursive",) or (not o.startswith("--") and set("rR") & set(o[1:]))
                        for o in opts)
        operands = [w for w in words if not w.startswith("-")]
        if cmd == "rm" and recursive:
            found.append(f"recursive rm: {cmd} {' '.join(words)}")
        elif cmd != "rm" and recursive:
            paths = operands[1:] if cmd in ("chown", "chmod", "chgrp") else operands
            bad = [p for p in paths if _shallow(p)]
            if bad:
                found.append(f"recursive {cmd} of {', '.join(bad)}")
        if cmd != "rm" and any(p.strip("'\"") == "/" for p in operands[1:]):
            found.append(f"{cmd} of /")
        if "--no-preserve-root" in opts:
            found.append("--no-preserve-root")
    if re.search(r"(?<![\w-])mkfs(\.\w+)?\s", fix):
        found.append("mkfs")
    if re.search(r"(?<![\w-])dd\s[^|;&]*\bof=/dev/", fix):
        found.append("dd to a device")
    if re.search(r">\s*/dev/(sd|nvme|hd|vd|mmcblk)", fix):
        found.append("redirect onto a block device")
    if re.search(r"\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(ba|z|da)?sh\b", fix):
        found.append("network script piped into a shell")
    if re.search(r":\(\)\s*\{", fix):
        found.append("fork bomb")
    if re.search(r"\bchmod\s+(-\w+\s+)*0?777\s+/(\s|$)", fix):
        found.append("chmod 777 /")
    return found
