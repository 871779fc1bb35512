"""Known clients: call targets that construct or use an external service.

Keys are qualified names after scope resolution (``requests.get``,
``sqlalchemy.create_engine``); values are the integration kind.
"""

from __future__ import annotations

CLIENTS: dict[str, str] = {
    # HTTP
    "requests.get": "http",
    "requests.post": "http",
    "requests.put": "http",
    "requests.patch": "http",
    "requests.delete": "http",
    "requests.head": "http",
    "requests.request": "http",
    "requests.Session": "http",
    "requests.session": "http",
    "httpx.get": "http",
    "httpx.post": "http",
    "httpx.put": "http",
    "httpx.patch": "http",
    "httpx.delete": "http",
    "httpx.request": "http",
    "httpx.stream": "http",
    "httpx.Client": "http",
    "httpx.AsyncClient": "http",
    "urllib.request.urlopen": "http",
    "urllib.request.Request": "http",
    "urllib.request.build_opener": "http",
    "http.client.HTTPConnection": "http",
    "http.client.HTTPSConnection": "http",
    "urllib3.PoolManager": "http",
    "urllib3.request": "http",
    "aiohttp.ClientSession": "http",
    "aiohttp.request": "http",
    "grpc.insecure_channel": "http",
    "grpc.secure_channel": "http",
    "websockets.connect": "http",
    # Databases and stores
    "sqlite3.connect": "database",
    "psycopg2.connect": "database",
    "psycopg.connect": "database",
    "psycopg.AsyncConnection.connect": "database",
    "psycopg2.pool.SimpleConnectionPool": "database",
    "pymysql.connect": "database",
    "MySQLdb.connect": "database",
    "mysql.connector.connect": "database",
    "asyncpg.connect": "database",
    "asyncpg.create_pool": "database",
    "aiosqlite.connect": "database",
    "duckdb.connect": "database",
    "cx_Oracle.connect": "database",
    "oracledb.connect": "database",
    "pyodbc.connect": "database",
    "sqlalchemy.create_engine": "database",
    "sqlalchemy.ext.asyncio.create_async_engine": "database",
    "pymongo.MongoClient": "database",
    "motor.motor_asyncio.AsyncIOMotorClient": "database",
    "redis.Redis": "database",
    "redis.StrictRedis": "database",
    "redis.from_url": "database",
    "redis.asyncio.Redis": "database",
    "redis.asyncio.from_url": "database",
    "elasticsearch.Elasticsearch": "database",
    "elasticsearch.AsyncElasticsearch": "database",
    "cassandra.cluster.Cluster": "database",
    "neo4j.GraphDatabase.driver": "database",
    "chromadb.PersistentClient": "database",
    "chromadb.HttpClient": "database",
    "chromadb.Client": "database",
    "pymemcache.client.base.Client": "database",
    # Queues and brokers
    "pika.BlockingConnection": "queue",
    "pika.SelectConnection": "queue",
    "aio_pika.connect": "queue",
    "aio_pika.connect_robust": "queue",
    "kafka.KafkaProducer": "queue",
    "kafka.KafkaConsumer": "queue",
    "confluent_kafka.Producer": "queue",
    "confluent_kafka.Consumer": "queue",
    "aiokafka.AIOKafkaProducer": "queue",
    "aiokafka.AIOKafkaConsumer": "queue",
    "celery.Celery": "queue",
    "kombu.Connection": "queue",
    "nats.connect": "queue",
    "rq.Queue": "queue",
    "zmq.Context": "queue",
    "google.cloud.pubsub_v1.PublisherClient": "queue",
    "google.cloud.pubsub_v1.SubscriberClient": "queue",
    # Cloud storage, mail, LLMs
    "boto3.client": "cloud",
    "boto3.resource": "cloud",
    "boto3.session.Session": "cloud",
    "google.cloud.storage.Client": "storage",
    "smtplib.SMTP": "email",
    "smtplib.SMTP_SSL": "email",
    "openai.OpenAI": "llm",
    "openai.AsyncOpenAI": "llm",
    "anthropic.Anthropic": "llm",
    "anthropic.AsyncAnthropic": "llm",
    "litellm.completion": "llm",
    "litellm.acompletion": "llm",
}

# boto3.client("sqs") and friends: the service name says what kind of store it is.
BOTO3_SERVICES: dict[str, str] = {
    "s3": "storage",
    "dynamodb": "database",
    "rds": "database",
    "sqs": "queue",
    "sns": "queue",
    "kinesis": "queue",
    "eventbridge": "queue",
    "ses": "email",
    "bedrock-runtime": "llm",
}

# Calls that read an environment variable; the variable is the first argument.
ENV_READERS = frozenset(
    {
        "os.getenv",
        "os.environ.get",
        "os.environ.setdefault",
        "os.environ.pop",
        "os.getenvb",
        "os.environb.get",
    }
)
ENV_MAPPINGS = frozenset({"os.environ", "os.environb"})

# Web frameworks: the class an app or router object is built from.
FLASK_APPS = frozenset({"flask.Flask", "flask.Blueprint", "quart.Quart", "quart.Blueprint"})
FASTAPI_APPS = frozenset({"fastapi.FastAPI", "fastapi.APIRouter", "starlette.routing.Router"})
HTTP_VERBS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
DJANGO_ROUTES = frozenset({"django.urls.path", "django.urls.re_path", "django.conf.urls.url"})
CLICK_COMMANDS = frozenset(
    {"click.command", "click.group", "click.decorators.command", "click.decorators.group"}
)
TYPER_APPS = frozenset({"typer.Typer"})
SETUP_CALLS = frozenset({"setuptools.setup", "distutils.core.setup"})
