"""Who may read a record (:class:`Access`) and who is asking (:class:`Principal`), seed 001.

Every stored chunk, fact and relation carries one access *key*, a short canonical string:

* ``public`` — everybody;
* ``org:<org id>`` — members of one organization;
* ``org:<org id>#<group>,<group>`` — members of that organization in one of the groups;
* ``user:<user id>`` — one user.

Names (entities, documents, sections) have no key of their own: a name exists for a
principal only through a relation it may read. A query's principal reads a key when
:meth:`Principal.can_read` says so; no principal reads ``public`` only. Stores filter on the
keys a principal reads (a short list: ``public``, its organization, its groups, itself).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from llama_kb.errors import ConfigurationError

Scope = Literal["public", "organization", "individual"]
PUBLIC = "public"
ACCESS_FIELD = "access"
"""The metadata / property field that holds a record's access key."""

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
_LEVELS = {"public": "public", "organization": "organization", "org": "organization"}
_LEVELS |= {"individual": "individual", "user": "individual", "private": "individual"}


def _checked_id(kind: str, value: object) -> str:
    if not isinstance(value, str) or not _ID.match(value):
        raise ConfigurationError(
            f"{kind} must be 1-128 letters, digits or . _ @ + - (starting with a letter or "
            f"digit), got {value!r}"
        )
    return value


@dataclass(frozen=True)
class Access:
    """Who may read a record.

    Attributes:
        scope: ``public``, ``organization`` or ``individual``.
        org_id: The organization (``organization`` scope).
        user_id: The user (``individual`` scope).
        groups: For ``organization`` scope: only members of one of these groups.
    """

    scope: Scope = "public"
    org_id: str | None = None
    user_id: str | None = None
    groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.scope == "organization":
            _checked_id("org_id", self.org_id)
        elif self.scope == "individual":
            _checked_id("user_id", self.user_id)
        elif self.scope != "public":
            raise ConfigurationError(
                f"unknown access scope {self.scope!r}; use public, organization or individual"
            )
        if self.groups and self.scope != "organization":
            raise ConfigurationError("access groups narrow an organization scope; set org_id")
        groups = tuple(sorted({_checked_id("group", g) for g in self.groups}))
        object.__setattr__(self, "groups", groups)

    @property
    def key(self) -> str:
        """The canonical access key stored on records."""
        if self.scope == "organization":
            return f"org:{self.org_id}" + (f"#{','.join(self.groups)}" if self.groups else "")
        if self.scope == "individual":
            return f"user:{self.user_id}"
        return PUBLIC

    @classmethod
    def parse(cls, value: Access | Mapping[str, Any] | str | None) -> Access:
        """An access from a key (``public``, ``org:acme``, ``user:alice``), a mapping in seed
        001's shape (``{"level": "organization", "orgId": "acme"}``; ``org_id``, ``user_id``,
        ``groups`` also accepted) or ``None`` (public).

        Raises:
            ConfigurationError: An unknown level or a missing / malformed id.
        """
        if value is None or isinstance(value, Access):
            return value or cls()
        if isinstance(value, str):
            return cls._from_key(value.strip())
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"access must be a key or a mapping, got {value!r}")
        level = str(value.get("level", value.get("scope", "public"))).lower()
        if level not in _LEVELS:
            raise ConfigurationError(
                f"unknown access level {level!r}; use public, organization or individual"
            )
        groups = value.get("groups") or ()
        if isinstance(groups, str) or not isinstance(groups, Iterable):
            raise ConfigurationError(f"access groups must be a list, got {groups!r}")
        return cls(
            _LEVELS[level],  # type: ignore[arg-type]
            org_id=value.get("org_id", value.get("orgId")),
            user_id=value.get("user_id", value.get("userId")),
            groups=tuple(groups),
        )

    @classmethod
    def _from_key(cls, key: str) -> Access:
        if key == PUBLIC:
            return cls()
        kind, _, rest = key.partition(":")
        if kind == "org" and rest:
            org, _, groups = rest.partition("#")
            return cls("organization", org_id=org, groups=tuple(g for g in groups.split(",") if g))
        if kind == "user" and rest:
            return cls("individual", user_id=rest)
        raise ConfigurationError(
            f"unknown access {key!r}; use public, org:<org id>[#group,...] or user:<user id>"
        )


FLAG_PREFIX = "acl:"


def access_flags(key: str) -> dict[str, bool]:
    """Metadata flags standing for access ``key`` in a store that filters on flags (one per
    way of reading it: ``org:acme#eng,ops`` gives ``acl:org:acme#eng`` and ``...#ops``)."""
    kind, _, rest = key.partition(":")
    org, _, groups = rest.partition("#")
    if kind == "org" and groups:
        return {f"{FLAG_PREFIX}org:{org}#{g}": True for g in groups.split(",")}
    return {f"{FLAG_PREFIX}{key}": True}


def readable(properties: Mapping[str, Any], access: Collection[str] | None) -> bool:
    """Whether a record with ``properties`` has an access key in ``access`` (``None``: all)."""
    return access is None or str(properties.get(ACCESS_FIELD, PUBLIC)) in access


def access_key(value: Access | Mapping[str, Any] | str | None) -> str:
    """The canonical key of ``value`` (see :meth:`Access.parse`)."""
    return Access.parse(value).key


def _optional_key(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return access_key(value)
    except ConfigurationError as e:
        raise ValueError(str(e)) from None  # pydantic reports it with the field's name


OptionalAccessKey = Annotated[str | None, BeforeValidator(_optional_key)]
"""A pydantic field holding an access (a key or seed 001's mapping), stored as its key."""


@dataclass(frozen=True)
class Principal:
    """Who is asking: a user, its organization and groups. ``Principal()`` is anonymous
    (public records only).

    Attributes:
        user_id: The user.
        org_id: The user's organization.
        groups: Groups the user belongs to within the organization.
    """

    user_id: str | None = None
    org_id: str | None = None
    groups: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.user_id is not None:
            _checked_id("user_id", self.user_id)
        if self.org_id is not None:
            _checked_id("org_id", self.org_id)
        object.__setattr__(self, "groups", frozenset(_checked_id("group", g) for g in self.groups))

    @classmethod
    def parse(cls, value: Principal | Mapping[str, Any] | str | None) -> Principal:
        """A principal from ``user@org`` (``user``, ``@org`` also accepted), a mapping with
        ``user_id`` / ``org_id`` / ``groups``, or ``None`` (anonymous).

        Raises:
            ConfigurationError: A malformed id.
        """
        if value is None or isinstance(value, Principal):
            return value or cls()
        if isinstance(value, str):
            user, _, org = value.strip().partition("@")
            return cls(user_id=user or None, org_id=org or None)
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"principal must be 'user@org' or a mapping, got {value!r}")
        return cls(
            user_id=value.get("user_id", value.get("userId")),
            org_id=value.get("org_id", value.get("orgId")),
            groups=frozenset(value.get("groups") or ()),
        )

    @property
    def anonymous(self) -> bool:
        """No user and no organization: reads public records only."""
        return self.user_id is None and self.org_id is None

    def can_read(self, key: str) -> bool:
        """Whether records with access ``key`` are visible to this principal."""
        if key == PUBLIC:
            return True
        kind, _, rest = key.partition(":")
        if kind == "user":
            return self.user_id is not None and rest == self.user_id
        if kind == "org" and self.org_id is not None:
            org, _, groups = rest.partition("#")
            if org != self.org_id:
                return False
            return not groups or bool(self.groups & set(groups.split(",")))
        return False

    def flag_clause(self) -> dict[str, Any]:
        """A Chroma ``where`` clause matching records flagged by :func:`access_flags` that
        this principal reads."""
        flags = [PUBLIC]
        if self.org_id is not None:
            flags.append(f"org:{self.org_id}")
            flags.extend(f"org:{self.org_id}#{g}" for g in sorted(self.groups))
        if self.user_id is not None:
            flags.append(f"user:{self.user_id}")
        clauses = [{f"{FLAG_PREFIX}{f}": True} for f in flags]
        return clauses[0] if len(clauses) == 1 else {"$or": clauses}

    def own_keys(self) -> frozenset[str]:
        """The keys this principal reads that need no list of stored keys: ``public``, its
        organization and itself (a safe floor when the stored keys cannot be read)."""
        keys = {PUBLIC}
        if self.org_id is not None:
            keys.add(f"org:{self.org_id}")
        if self.user_id is not None:
            keys.add(f"user:{self.user_id}")
        return frozenset(keys)

    def visible(self, keys: Iterable[str]) -> frozenset[str]:
        """The keys among ``keys`` this principal reads (``public`` always included)."""
        return frozenset({PUBLIC, *(k for k in keys if self.can_read(k))})
