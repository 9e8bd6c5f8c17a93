"""Where the package's shipped files (config/, launch/) are.

A colcon/ament install has them under share/bsal_ros; the pip development
install (`make setup`, editable) uses the source tree they come from.
"""
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[1]


def share_dir() -> Path:
    """The folder holding config/ and launch/ for this install."""
    if (SOURCE_ROOT / "config" / "brak.yaml").is_file():
        return SOURCE_ROOT
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory("bsal_ros"))


def shipped(*parts: str) -> Path:
    """A shipped file, e.g. shipped('config', 'users.yaml')."""
    return share_dir().joinpath(*parts)
