"""Generated from openapi.yaml by tools/sdk/generate.sh. Do not edit."""
