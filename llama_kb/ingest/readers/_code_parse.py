"""Parsing source code with tree-sitter: definitions, imports and calls of one file.

Grammars come from ``tree-sitter-language-pack`` (pinned to 0.13.0: later releases download
grammars at run time and fail offline). :func:`parse_code` returns the definitions
(function, class, method, ...) with their enclosing path (``Class.method``), byte ranges,
and the names each one calls; and the modules (and, where the language says, names) the
file imports. Callee names are the last identifier of the called expression
(``self.store.add(...)`` calls ``add``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from llama_kb.errors import MissingDependencyError

__all__ = ["LANGUAGES", "CodeStructure", "Definition", "parse_code"]

LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
}
"""File suffix -> tree-sitter language name."""

_JS_DEFS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "method_definition": "method",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
}
_C_DEFS = {"function_definition": "function", "struct_specifier": "struct"}
_DEFINITIONS: dict[str, dict[str, str]] = {
    "python": {"function_definition": "function", "class_definition": "class"},
    "javascript": _JS_DEFS,
    "typescript": _JS_DEFS,
    "tsx": _JS_DEFS,
    "go": {"function_declaration": "function", "method_declaration": "method", "type_spec": "type"},
    "java": {
        "class_declaration": "class",
        "interface_declaration": "interface",
        "enum_declaration": "enum",
        "record_declaration": "class",
        "method_declaration": "method",
        "constructor_declaration": "method",
    },
    "rust": {
        "function_item": "function",
        "function_signature_item": "function",
        "struct_item": "struct",
        "enum_item": "enum",
        "trait_item": "trait",
        "impl_item": "impl",
        "mod_item": "module",
    },
    "c": _C_DEFS,
    "cpp": {**_C_DEFS, "class_specifier": "class", "namespace_definition": "namespace"},
}
_IMPORTS = {
    "import_statement",
    "import_from_statement",
    "import_spec",
    "import_declaration",
    "use_declaration",
    "preproc_include",
}
_CALLS = {"call", "call_expression", "method_invocation", "new_expression"}
_CONTAINERS = {"class", "interface", "struct", "trait", "impl", "module", "namespace", "enum"}
_LAST_NAME = re.compile(r"([A-Za-z_]\w*)\W*$")
_DECLARATOR_NAMES = {
    "identifier",
    "field_identifier",
    "qualified_identifier",
    "destructor_name",
    "operator_name",
}


@dataclass
class Definition:
    """One definition in a file."""

    name: str
    qualified: str
    kind: str
    start: int
    end: int
    start_line: int
    end_line: int
    parent: str | None = None
    calls: list[str] = field(default_factory=list)
    children: list[Definition] = field(default_factory=list)


@dataclass
class CodeStructure:
    """What :func:`parse_code` found in one file."""

    language: str
    definitions: list[Definition] = field(default_factory=list)
    """Every definition, in source order (nested ones included)."""
    imports: list[str] = field(default_factory=list)
    """Imported modules, headers or paths, as written."""
    imported_names: list[str] = field(default_factory=list)
    """Names bound by imports (``from m import name``, ``import {name} from``)."""
    module_calls: list[str] = field(default_factory=list)
    """Calls outside any definition."""


def _parser(language: str) -> Any:
    try:
        from tree_sitter_language_pack import get_parser
    except ImportError as e:
        raise MissingDependencyError(
            "tree-sitter-language-pack", "code", "reading source code"
        ) from e
    return get_parser(language)  # type: ignore[arg-type]


def _text(node: Any) -> str:
    return bytes(node.text or b"").decode("utf-8", "replace")


def _definition_name(node: Any, language: str) -> tuple[str, str | None] | None:
    """``(name, explicit parent)`` of a definition node, or ``None`` when it has no name."""
    if node.type == "impl_item":
        target = node.child_by_field_name("type")
        return (_text(target), None) if target is not None else None
    if node.type in ("struct_specifier", "class_specifier") and (
        node.child_by_field_name("body") is None
    ):
        return None  # a use of the type, not its definition
    name = node.child_by_field_name("name")
    if name is None and node.type == "function_definition" and language in ("c", "cpp"):
        declarator = node.child_by_field_name("declarator")
        while declarator is not None and declarator.type not in _DECLARATOR_NAMES:
            declarator = declarator.child_by_field_name("declarator")
        name = declarator
    if name is None:
        return None
    text = _text(name)
    parent = None
    if node.type == "method_declaration" and language == "go":
        receiver = node.child_by_field_name("receiver")
        match = re.search(r"(\w+)\s*\)\s*$", _text(receiver)) if receiver is not None else None
        parent = match.group(1) if match else None
    if "::" in text:
        parent, text = text.rsplit("::", 1)
    return text, parent


def _import(node: Any, structure: CodeStructure) -> None:
    kind = node.type
    if kind == "import_from_statement":
        module = node.child_by_field_name("module_name")
        if module is not None:
            structure.imports.append(_text(module))
        for child in node.children_by_field_name("name"):
            target = child.child_by_field_name("name") or child
            structure.imported_names.append(_text(target).split(".")[-1])
        return
    if kind == "import_statement" and node.child_by_field_name("source") is not None:
        structure.imports.append(_text(node.child_by_field_name("source")).strip("'\""))
        clause = next((c for c in node.children if c.type == "import_clause"), None)
        if clause is not None:
            structure.imported_names.extend(re.findall(r"(\w+)\s*(?:,|}|$)", _text(clause)))
        return
    if kind == "import_statement":
        structure.imports.extend(_text(c) for c in node.children_by_field_name("name"))
        return
    if any(c.type in ("import_spec", "import_spec_list") for c in node.children):
        return  # Go: each import_spec is visited on its own
    target = (
        node.child_by_field_name("path")
        or node.child_by_field_name("argument")
        or next((c for c in node.named_children), None)
    )
    if target is not None:
        structure.imports.append(_text(target).strip("'\"<>"))


def _callee(node: Any) -> str | None:
    target = (
        node.child_by_field_name("function")
        or node.child_by_field_name("name")
        or node.child_by_field_name("constructor")
    )
    if target is None:
        return None
    match = _LAST_NAME.search(re.sub(r"<[^<>]*>", "", _text(target)))
    return match.group(1) if match else None


def parse_code(source: bytes, language: str) -> CodeStructure:
    """Definitions, imports and calls of one file (see the module docs).

    Raises:
        MissingDependencyError: ``tree-sitter-language-pack`` is not installed.
    """
    definitions = _DEFINITIONS.get(language, {})
    structure = CodeStructure(language)
    tree = _parser(language).parse(source)
    stack: list[tuple[Any, Definition | None]] = [(tree.root_node, None)]
    while stack:
        node, owner = stack.pop()
        current = owner
        kind = definitions.get(node.type)
        named = _definition_name(node, language) if kind else None
        if kind and named:
            name, explicit_parent = named
            parent = explicit_parent or (owner.qualified if owner else None)
            if kind == "function" and (
                explicit_parent or (owner is not None and owner.kind in _CONTAINERS)
            ):
                kind = "method"
            current = Definition(
                name=name,
                qualified=f"{parent}.{name}" if parent else name,
                kind=kind,
                start=node.start_byte,
                end=node.end_byte,
                start_line=node.start_point[0] + 1,
                end_line=node.end_point[0] + 1,
                parent=parent,
            )
            structure.definitions.append(current)
            if owner is not None:
                owner.children.append(current)
        elif node.type in _IMPORTS:
            _import(node, structure)
        elif node.type in _CALLS:
            callee = _callee(node)
            if callee:
                (current.calls if current else structure.module_calls).append(callee)
        stack.extend((child, current) for child in reversed(node.children))
    structure.definitions.sort(key=lambda d: d.start)
    return structure
