"""The cogen version, recorded in every manifest and dataset card."""

__version__ = "0.1.0"
