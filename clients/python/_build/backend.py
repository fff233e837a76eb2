"""A PEP 517 build backend of the standard library alone (wheel, sdist and
editable installs of the pure-Python `edgemail` package), so that
`pip install ./clients/python` works without reaching a package index:
pip's isolated build needs nothing from one, as `requires = []`."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "edgemail"
TAG = "py3-none-any"


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _version() -> str:
    found = re.search(r'^VERSION = "([^"]+)"', (ROOT / PACKAGE / "_version.py").read_text(), re.M)
    if not found:
        raise RuntimeError(f"no VERSION in {PACKAGE}/_version.py")
    return found.group(1)


def _metadata() -> str:
    project = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {_version()}",
             f"Summary: {project['description']}", f"Requires-Python: {project['requires-python']}"]
    readme = ROOT / project.get("readme", "README.md")
    if readme.exists():
        lines += ["Description-Content-Type: text/markdown", "", readme.read_text()]
    return "\n".join(lines) + "\n"


def _sources() -> list[Path]:
    return sorted(p for p in (ROOT / PACKAGE).rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def _dist_info() -> str:
    return f"{_project()['name']}-{_version()}.dist-info"


def _write_wheel(directory: str, files: dict[str, bytes]) -> str:
    name = f"{_project()['name']}-{_version()}-{TAG}.whl"
    info = _dist_info()
    files = {**files, f"{info}/METADATA": _metadata().encode(),
             f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: edgemail-backend\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()}
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(Path(directory) / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, {p.relative_to(ROOT).as_posix(): p.read_bytes() for p in _sources()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding only a .pth naming this folder: edits to the sources take effect without reinstalling."""
    return _write_wheel(wheel_directory, {f"_{PACKAGE}_editable.pth": f"{ROOT}\n".encode()})


def build_sdist(sdist_directory, config_settings=None):
    base = f"{_project()['name']}-{_version()}"
    name = f"{base}.tar.gz"
    paths = [ROOT / "pyproject.toml", ROOT / "README.md", ROOT / "_build" / "backend.py", *_sources()]
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as sdist:
        for path in paths:
            if path.exists():
                sdist.add(path, arcname=f"{base}/{path.relative_to(ROOT).as_posix()}")
        pkg_info = _metadata().encode()
        entry = tarfile.TarInfo(f"{base}/PKG-INFO")
        entry.size = len(pkg_info)
        sdist.addfile(entry, io.BytesIO(pkg_info))
    return name
