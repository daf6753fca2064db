"""Settings: what a run may be configured with, and where each value came from.

setting_table.py declares every setting once (its default, type, range and front doors: flag,
environment variable, sexp.toml key, API keyword); loading.py reads sexp.toml, the environment,
flags and the API's keywords through that table and checks every value, once.
"""

from .loading import (
    DEFAULT,
    DOTENV,
    ENVIRONMENT,
    FLAG,
    TOML,
    api_base_warning,
    load_dotenv,
    load_settings,
    override,
    provider_keys,
    settings_in_force,
)
from .setting_table import (
    API_SETTINGS,
    DEFAULT_RECURSION_LIMIT,
    SETTING_ROWS,
    SETTINGS,
    SHOWN_SETTINGS,
    TOML_KEYS,
    Setting,
    Settings,
)

__all__ = [
    "API_SETTINGS",
    "DEFAULT",
    "DEFAULT_RECURSION_LIMIT",
    "DOTENV",
    "ENVIRONMENT",
    "FLAG",
    "SETTINGS",
    "SETTING_ROWS",
    "SHOWN_SETTINGS",
    "TOML",
    "TOML_KEYS",
    "Setting",
    "Settings",
    "api_base_warning",
    "load_dotenv",
    "load_settings",
    "override",
    "provider_keys",
    "settings_in_force",
]
