"""Stub of lmcache/v1/storage_backend/connector/__init__.py: URL parsing,
ConnectorContext, ConnectorAdapter, ConnectorManager with the
remote_storage_plugins loader, CreateConnector."""
import asyncio
import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Dict, List, Optional
from urllib.parse import parse_qs, urlparse

from lmcache.logging import init_logger
from lmcache.v1.storage_backend.connector.base_connector import RemoteConnector

logger = init_logger(__name__)


@dataclass
class ParsedRemoteURL:
    host: str
    port: int
    path: str
    username: Optional[str] = None
    password: Optional[str] = None
    query_params: Dict[str, List[str]] = field(default_factory=dict)


def parse_remote_url(url: str) -> ParsedRemoteURL:
    parsed = urlparse(url)
    assert parsed.hostname is not None, f"Invalid URL {url}: missing host"
    assert parsed.port is not None, f"Invalid URL {url}: missing port"
    return ParsedRemoteURL(host=parsed.hostname, port=parsed.port, path=parsed.path or "",
                           username=parsed.username, password=parsed.password,
                           query_params=parse_qs(parsed.query) if parsed.query else {})


def extract_plugin_type(plugin_name: str) -> str:
    """'strata.replica1' -> 'strata' (a plugin type may have several instances)."""
    return plugin_name.split(".", 1)[0]


class ConnectorContext:
    def __init__(self, url: str, loop: asyncio.AbstractEventLoop, local_cpu_backend,
                 config, metadata, plugin_name: Optional[str] = None):
        self.url = url
        self.loop = loop
        self.local_cpu_backend = local_cpu_backend
        self.config = config
        self.metadata = metadata
        self.plugin_name = plugin_name


class ConnectorAdapter(ABC):
    def __init__(self, schema: str = "") -> None:
        self.schema = schema

    @abstractmethod
    def can_parse(self, url: str) -> bool:
        pass

    @abstractmethod
    def create_connector(self, context: ConnectorContext) -> RemoteConnector:
        pass


class ConnectorManager:
    def __init__(self, url, loop, local_cpu_backend, config=None, metadata=None,
                 plugin_name=None) -> None:
        self.context = ConnectorContext(url=url, loop=loop, local_cpu_backend=local_cpu_backend,
                                        config=config, metadata=metadata,
                                        plugin_name=plugin_name)
        self.adapters: List[ConnectorAdapter] = []
        self._discover_adapters()

    def _discover_adapters(self) -> None:
        # No built-in adapters in the stub; plugins from remote_storage_plugins.
        config = self.context.config
        extra = (config.extra_config if config is not None else None) or {}
        for name in (config.remote_storage_plugins if config is not None else None) or []:
            module_path = extra.get(f"remote_storage_plugin.{name}.module_path")
            class_name = extra.get(f"remote_storage_plugin.{name}.class_name")
            if not module_path or not class_name:
                logger.warning("remote storage plugin %s lacks module_path/class_name", name)
                continue
            cls = getattr(importlib.import_module(module_path), class_name)
            if not (isinstance(cls, type) and issubclass(cls, ConnectorAdapter)):
                raise TypeError(f"{module_path}.{class_name} is not a ConnectorAdapter")
            self.adapters.append(cls())

    def create_connector(self) -> RemoteConnector:
        for adapter in self.adapters:
            if adapter.can_parse(self.context.url):
                connector = adapter.create_connector(self.context)
                if not isinstance(connector, RemoteConnector):
                    raise TypeError(f"{type(connector).__name__} is not a RemoteConnector")
                connector.post_init()
                return connector
        raise ValueError(f"No adapter found for URL: {self.context.url}")


def CreateConnector(url, loop, local_cpu_backend, config=None, metadata=None,
                    plugin_name=None) -> RemoteConnector:
    if "://" not in url:
        raise ValueError(f"Invalid remote url {url}: missing scheme")
    return ConnectorManager(url, loop, local_cpu_backend, config, metadata,
                            plugin_name).create_connector()
