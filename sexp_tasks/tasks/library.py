"""The TaskLibrary: every template by name, loaded from directories in order (later wins)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import NameError_, TemplateError
from ..lang.suggest import did_you_mean
from ..xmltools import read_template
from .template import TaskTemplate, check_rules, load_templates


class TaskLibrary:
    """Templates by name. A directory may not define a name twice; a later directory may
    override an earlier one, with a warning."""

    def __init__(self, warn: Callable[[str], None] = lambda message: None) -> None:
        self._templates: dict[str, TaskTemplate] = {}
        # The package's own templates (stdlib/templates/NAME.xml), parsed on first use so that
        # a program that calls no task never imports lxml. Any other directory overrides them.
        self._lazy: dict[str, Path] = {}
        self._warn = warn

    @property
    def templates(self) -> dict[str, TaskTemplate]:
        """Every template by name (the package's own ones loaded now, if they were not yet)."""
        while self._lazy:
            self._load_lazy(next(iter(self._lazy)))
        return self._templates

    def copy(self, warn: Callable[[str], None]) -> TaskLibrary:
        """A library holding the same templates (read once, shared: templates are not changed
        once loaded) that a run can add to without changing this one (a batch's rows)."""
        twin = TaskLibrary(warn)
        twin._templates = dict(self._templates)
        twin._lazy = dict(self._lazy)
        return twin

    def add_lazy_directory(self, directory: Path) -> None:
        """Register directory's NAME.xml files, each defining task NAME, to be read when needed."""
        for path in sorted(directory.glob("*.xml")):
            if path.stem not in self._templates:
                self._lazy[path.stem] = path

    def _load_lazy(self, name: str) -> None:
        path = self._lazy.pop(name)
        for template in load_templates(read_template(path), str(path)):
            if template.name not in self._templates:
                check_rules(template)
                self._templates[template.name] = template

    def load_directory(self, directory: Path, strict: bool = True) -> list[TemplateError]:
        """Load every *.xml file in directory; return (or raise, when strict) template errors."""
        errors: list[TemplateError] = []
        seen: dict[str, str] = {}
        for path in sorted(directory.glob("*.xml")):
            try:
                templates = load_templates(read_template(path), str(path))
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
        self._lazy.pop(template.name, None)
        previous = self._templates.get(template.name)
        if previous is not None and warn_on_override and previous.origin != template.origin:
            self._warn(
                f"task '{template.name}' from {template.origin} overrides the one from {previous.origin}"
            )
        self._templates[template.name] = template

    def get(self, name: str) -> TaskTemplate | None:
        if name in self._lazy:
            self._load_lazy(name)
        return self._templates.get(name)

    def require(self, name: str) -> TaskTemplate:
        """The template, or a VALIDATION-free lookup error naming close matches."""
        template = self.get(name)
        if template is None:
            raise NameError_(f"unknown task '{name}'{self.suggestion(name)}")
        return template

    def suggestion(self, name: str) -> str:
        return did_you_mean(name, self.templates)

    def __iter__(self) -> Iterator[TaskTemplate]:
        return iter(sorted(self.templates.values(), key=lambda t: t.name))

    def __len__(self) -> int:
        return len(self.templates)
