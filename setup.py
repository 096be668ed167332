"""What pyproject.toml cannot say: the checkout's ``suites/`` folder ships in the wheel as the
data of the ``pytest_citebench_suites`` package (``pytest_citebench_suites/data``), without moving
it (the repository's commands, docs and cassettes name ``suites/...``). Everything else about the
distribution is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["pytest_citebench*"]), "pytest_citebench_suites.data"],
    package_dir={"pytest_citebench_suites.data": "suites"},
    package_data={
        # The packaged index of known papers (build-title-index), read by the kinds of wrong
        # citation.
        "pytest_citebench.papers.reasons": ["known_papers.tsv.gz"],
        # Every suite file: manifests, items, corpora, their READMEs and licences.
        "pytest_citebench_suites.data": ["**/*.toml", "**/*.jsonl", "**/*.md", "**/LICENSE"],
    },
    include_package_data=False,
)
