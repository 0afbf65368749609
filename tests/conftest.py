"""Shared fixtures live in tests/fixtures/, one module per part of the system."""

pytest_plugins = [
    "tests.fixtures.aws",  # one moto server for the whole session
    "tests.fixtures.sagemaker_fakes",  # moto's training-job gaps closed, requests recorded, fault proxy
    "tests.fixtures.endpoint_fakes",  # moto's endpoint gaps closed (Graviton configs, InvokeEndpoint)
    "tests.fixtures.sentiment",  # one tiny trained RoBERTa for the whole session
    "tests.fixtures.browser",  # headless Chromium through Playwright
]
