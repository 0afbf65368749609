"""v2's sagemaker.deserializers."""
from sagelaunch.estimators.serializers import (BaseDeserializer, BytesDeserializer, CSVDeserializer, JSONDeserializer,
                                    NumpyDeserializer, SimpleBaseDeserializer, StringDeserializer)

__all__ = ["BaseDeserializer", "SimpleBaseDeserializer", "BytesDeserializer", "StringDeserializer",
           "JSONDeserializer", "CSVDeserializer", "NumpyDeserializer"]
