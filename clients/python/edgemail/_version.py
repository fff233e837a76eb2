"""This client's version, named in the User-Agent and the package metadata (the build backend reads it here)."""

VERSION = "0.1.0"
