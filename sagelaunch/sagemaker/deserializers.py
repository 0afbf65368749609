"""v2's sagemaker.deserializers."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.serializers import (BaseDeserializer, BytesDeserializer, CSVDeserializer, JSONDeserializer,
                                    NumpyDeserializer, SimpleBaseDeserializer, StringDeserializer)

__all__ = ["BaseDeserializer", "SimpleBaseDeserializer", "BytesDeserializer", "StringDeserializer",
           "JSONDeserializer", "CSVDeserializer", "NumpyDeserializer"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
