# apimctl in a container: `docker run --rm -v "$PWD:/work" apimctl plan apimctl/`.
#
# Two stages: the first builds the wheel from the project's own files (nothing else of the
# repository is copied), the second installs only that wheel on a slim Python and runs
# apimctl as an unprivileged user in /work (mount your manifests there).
#
#   docker build -t apimctl .
#   docker run --rm apimctl --version
#   docker run --rm -v "$PWD:/work" -e APIMCTL_URL -e APIMCTL_TOKEN apimctl plan apimctl/
#
# The user is uid 10001; to write into a mounted directory (export --out, plan --out, the
# embedded server's .apimctl/), run as yourself: docker run --user "$(id -u):$(id -g)" ...

ARG PYTHON_VERSION=3.12

FROM python:${PYTHON_VERSION}-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src/ src/
RUN pip wheel --no-deps --wheel-dir /dist .

FROM python:${PYTHON_VERSION}-slim
LABEL org.opencontainers.image.title="apimctl" \
      org.opencontainers.image.description="Configuration as code for the API-management platform" \
      org.opencontainers.image.source="https://github.com/apimctl/apimctl" \
      org.opencontainers.image.licenses="Apache-2.0"
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
COPY --from=build /dist/ /tmp/dist/
RUN pip install /tmp/dist/*.whl && rm -rf /tmp/dist \
    && useradd --create-home --uid 10001 --user-group apimctl \
    && mkdir -p /work && chown apimctl:apimctl /work
USER apimctl
WORKDIR /work
ENTRYPOINT ["apimctl"]
CMD ["--help"]
