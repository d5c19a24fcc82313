"""The closing count of a file's vector cases decided against a real oracle
(dpkg, huggingface_hub's own lines, compute-runtime's rules): printed in
the run's output, and failing unless every case agreed and enough ran
(issue 27: alone, as `-k tally`, a count would pass as 0 == 0)."""


def report_tally(capsys, what, counts, minimum):
    """counts: {"run": N, "agree": N[, "warn": N]}, as the cases above it
    in the file filled them; minimum: how many cases the file has."""
    with capsys.disabled():
        print(f"\n{what}: {counts['run']} run, {counts['agree']} agree, "
              f"{counts.get('warn', 0)} deliberate warnings")
    assert counts["run"] == counts["agree"], counts
    assert counts["run"] >= minimum, f"the {what} did not run ({counts['run']} of {minimum}): run the whole file"
