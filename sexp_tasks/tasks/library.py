"""The TaskLibrary: every template by name, loaded from directories in order (later wins)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from ..suggest import did_you_mean
from ..xmltools import TemplateError
from .template import TaskTemplate, check_rules, load_templates


class TaskLibrary:
    """Templates by name. A directory may not define a name twice; a later directory may
    override an earlier one, with a warning."""

    def __init__(self, warn: Callable[[str], None] = lambda message: None) -> None:
        self.templates: dict[str, TaskTemplate] = {}
        self._warn = warn

    def load_directory(self, directory: Path, strict: bool = True) -> list[TemplateError]:
        """Load every *.xml file in directory; return (or raise, when strict) template errors."""
        errors: list[TemplateError] = []
        seen: dict[str, str] = {}
        for path in sorted(directory.glob("*.xml")):
            try:
                templates = load_templates(path.read_text(encoding="utf-8"), str(path))
            except TemplateError as err:
                if strict:
                    raise
                errors.append(err)
                continue
            for template in templates:
                if template.name in seen:
                    twice = TemplateError(
                        "VALIDATION_ERROR",
                        f"task '{template.name}' is defined twice in {directory}"
                        f" ({seen[template.name]} and {path.name})",
                        template.span,
                    )
                    if strict:
                        raise twice
                    errors.append(twice)
                    continue
                seen[template.name] = path.name
                self.add(template)
        return errors

    def add(self, template: TaskTemplate, warn_on_override: bool = True) -> None:
        """Register a template (checked), replacing any of the same name."""
        check_rules(template)
        previous = self.templates.get(template.name)
        if previous is not None and warn_on_override and previous.origin != template.origin:
            self._warn(
                f"task '{template.name}' from {template.origin} overrides the one from {previous.origin}"
            )
        self.templates[template.name] = template

    def get(self, name: str) -> TaskTemplate | None:
        return self.templates.get(name)

    def require(self, name: str) -> TaskTemplate:
        """The template, or a VALIDATION-free lookup error naming close matches."""
        template = self.templates.get(name)
        if template is None:
            from ..errors import NameError_

            raise NameError_(f"unknown task '{name}'{self.suggestion(name)}")
        return template

    def suggestion(self, name: str) -> str:
        return did_you_mean(name, self.templates)

    def __iter__(self) -> Iterator[TaskTemplate]:
        return iter(sorted(self.templates.values(), key=lambda t: t.name))

    def __len__(self) -> int:
        return len(self.templates)
