"""flashspec's analysis scripts as a package: `from analysis import fsresults`
(loading results, derived columns), report, fidelity, timeline, figstyle.
Installable with analysis/pyproject.toml (commands flashspec-report,
flashspec-fidelity, flashspec-timeline); see analysis/README.md."""
