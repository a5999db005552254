"""_infra subpackage."""
