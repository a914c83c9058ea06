__title__ = "httpx"
__description__ = "A next generation HTTP client, for Python 3."
__version__ = "0.29.0"
