package com.hospital.surveyinbox.config;

import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import java.time.ZoneId;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.validation.annotation.Validated;

/**
 * Every setting of the service under one {@code adapter.*} tree, bound and validated at startup so a
 * typo or a missing secret fails the boot instead of surfacing at the first message.
 */
@Validated
@ConfigurationProperties("adapter")
public class AdapterProperties {

    @Valid private final Inbox inbox = new Inbox();
    @Valid private final Kafka kafka = new Kafka();
    @Valid private final Legacy legacy = new Legacy();
    @Valid private final Downstream account = new Downstream();
    @Valid private final Downstream survey = new Downstream();
    @Valid private final Http http = new Http();
    @Valid private final Cache cache = new Cache();
    @Valid private final Reception reception = new Reception();
    @Valid private final Security security = new Security();
    @Valid private final Circuit circuit = new Circuit();
    @Valid private final Crypto crypto = new Crypto();
    @Valid private final Retention retention = new Retention();

    public Inbox getInbox() { return inbox; }
    public Kafka getKafka() { return kafka; }
    public Legacy getLegacy() { return legacy; }
    public Downstream getAccount() { return account; }
    public Downstream getSurvey() { return survey; }
    public Http getHttp() { return http; }
    public Cache getCache() { return cache; }
    public Reception getReception() { return reception; }
    public Security getSecurity() { return security; }
    public Circuit getCircuit() { return circuit; }
    public Crypto getCrypto() { return crypto; }
    public Retention getRetention() { return retention; }

    public static class Inbox {
        /** false = rollback toggle: reception registers synchronously while stored rows keep draining. */
        private boolean enabled = true;
        /** The attempt that reaches this count turns the row DEAD. */
        @Min(1) private int maxAttempts = 5;
        /** A FAILED row is republished once its last attempt is older than this. */
        @NotNull private Duration retryDelay = Duration.ofMinutes(1);
        /** A RECEIVED row older than this is presumed to have lost its event and is republished. */
        @NotNull private Duration lostEventAfter = Duration.ofMinutes(2);
        /** A PROCESSING row untouched for this long is presumed abandoned, reset to RECEIVED and republished. */
        @NotNull private Duration stuckProcessingAfter = Duration.ofMinutes(15);
        /** Quartz cron of the clustered redelivery job (seconds field first). */
        @NotBlank private String redeliverCron = "0 * * * * ?";
        /** Most rows of each stalled kind republished per redelivery tick, oldest first. */
        @Min(1) private int redeliverBatchSize = 200;
        /** false keeps this instance out of the redelivery job (its route does not start). */
        private boolean redeliverEnabled = true;
        /** Days of redelivery_run history kept (operators' view of the job's ticks). */
        @Min(1) private int redeliverHistoryDays = 7;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public int getMaxAttempts() { return maxAttempts; }
        public void setMaxAttempts(int maxAttempts) { this.maxAttempts = maxAttempts; }
        public Duration getRetryDelay() { return retryDelay; }
        public void setRetryDelay(Duration retryDelay) { this.retryDelay = retryDelay; }
        public Duration getLostEventAfter() { return lostEventAfter; }
        public void setLostEventAfter(Duration lostEventAfter) { this.lostEventAfter = lostEventAfter; }
        public Duration getStuckProcessingAfter() { return stuckProcessingAfter; }
        public void setStuckProcessingAfter(Duration d) { this.stuckProcessingAfter = d; }
        public String getRedeliverCron() { return redeliverCron; }
        public void setRedeliverCron(String redeliverCron) { this.redeliverCron = redeliverCron; }
        public int getRedeliverBatchSize() { return redeliverBatchSize; }
        public void setRedeliverBatchSize(int redeliverBatchSize) { this.redeliverBatchSize = redeliverBatchSize; }
        public boolean isRedeliverEnabled() { return redeliverEnabled; }
        public void setRedeliverEnabled(boolean redeliverEnabled) { this.redeliverEnabled = redeliverEnabled; }
        public int getRedeliverHistoryDays() { return redeliverHistoryDays; }
        public void setRedeliverHistoryDays(int redeliverHistoryDays) { this.redeliverHistoryDays = redeliverHistoryDays; }
    }

    public static class Kafka {
        /** Topic of the "stored in the inbox" events; key = srvyDrawupNo. */
        @NotBlank private String topic = "survey-send-info-received";
        /** Consumer group of the processing route. */
        @NotBlank private String groupId = "survey-inbox-adapter";
        /** Partitions used when the service creates the topic itself; must be >= consumers. */
        @Min(1) private int partitions = 64;
        /** Replication factor used when the service creates the topic itself. */
        @Min(1) private short replicationFactor = 1;
        /** Concurrent Kafka consumers (threads) of the processing route in this instance. */
        @Min(1) private int consumers = 16;
        /** Records fetched per poll; small because each record makes several downstream calls. */
        @Min(1) private int maxPollRecords = 10;
        /** Threads that publish reception events after commit (the wire tap's pool). */
        @Min(1) private int publishThreads = 4;
        /**
         * Events waiting for a publish thread; beyond it an event is dropped (its row stays RECEIVED and the
         * redelivery job republishes it), so a reception never waits on Kafka.
         */
        @Min(1) private int publishQueue = 5000;

        public String getTopic() { return topic; }
        public void setTopic(String topic) { this.topic = topic; }
        public String getGroupId() { return groupId; }
        public void setGroupId(String groupId) { this.groupId = groupId; }
        public int getPartitions() { return partitions; }
        public void setPartitions(int partitions) { this.partitions = partitions; }
        public short getReplicationFactor() { return replicationFactor; }
        public void setReplicationFactor(short replicationFactor) { this.replicationFactor = replicationFactor; }
        public int getConsumers() { return consumers; }
        public void setConsumers(int consumers) { this.consumers = consumers; }
        public int getMaxPollRecords() { return maxPollRecords; }
        public void setMaxPollRecords(int maxPollRecords) { this.maxPollRecords = maxPollRecords; }
        public int getPublishThreads() { return publishThreads; }
        public void setPublishThreads(int publishThreads) { this.publishThreads = publishThreads; }
        public int getPublishQueue() { return publishQueue; }
        public void setPublishQueue(int publishQueue) { this.publishQueue = publishQueue; }
    }

    public static class Downstream {
        /** Base URL, e.g. http://account-service:8080 (no trailing slash). */
        @NotBlank private String baseUrl;

        public String getBaseUrl() { return baseUrl; }
        public void setBaseUrl(String baseUrl) { this.baseUrl = baseUrl; }
    }

    public static class Legacy extends Downstream {
        /** Time zone of the legacy sendDt field (yyyyMMddHHmmss, local time). */
        @NotNull private ZoneId zone = ZoneId.of("Asia/Seoul");

        public ZoneId getZone() { return zone; }
        public void setZone(ZoneId zone) { this.zone = zone; }
    }

    public static class Http {
        /** Timeout to open a TCP connection to a downstream. */
        @NotNull private Duration connectTimeout = Duration.ofSeconds(2);
        /** Timeout waiting for a downstream response (the slow consent lookup takes ~1 s). */
        @NotNull private Duration responseTimeout = Duration.ofSeconds(5);

        public Duration getConnectTimeout() { return connectTimeout; }
        public void setConnectTimeout(Duration connectTimeout) { this.connectTimeout = connectTimeout; }
        public Duration getResponseTimeout() { return responseTimeout; }
        public void setResponseTimeout(Duration responseTimeout) { this.responseTimeout = responseTimeout; }
    }

    public static class Cache {
        /** TTL of a cached consent list (empty lists included; a 404 is never cached). */
        @NotNull private Duration consentTtl = Duration.ofMinutes(5);
        /** Redis key prefix; the srvyNo is appended. */
        @NotBlank private String keyPrefix = "survey-inbox-adapter:consents:";

        public Duration getConsentTtl() { return consentTtl; }
        public void setConsentTtl(Duration consentTtl) { this.consentTtl = consentTtl; }
        public String getKeyPrefix() { return keyPrefix; }
        public void setKeyPrefix(String keyPrefix) { this.keyPrefix = keyPrefix; }
    }

    public static class Reception {
        /** Largest accepted request body in bytes; larger bodies get 413, counted on the stream. */
        @Min(1) private int maxBodyBytes = 65536;
        /**
         * Longest a reception waits for its row to be committed; then it answers 503 (a database that stops
         * answering without closing connections must not hold the sender's transaction open).
         */
        @NotNull private Duration storeTimeout = Duration.ofSeconds(5);
        @Valid private final RateLimit rateLimit = new RateLimit();
        @Valid private final GroupInsert groupInsert = new GroupInsert();

        public int getMaxBodyBytes() { return maxBodyBytes; }
        public void setMaxBodyBytes(int maxBodyBytes) { this.maxBodyBytes = maxBodyBytes; }
        public Duration getStoreTimeout() { return storeTimeout; }
        public void setStoreTimeout(Duration storeTimeout) { this.storeTimeout = storeTimeout; }
        public RateLimit getRateLimit() { return rateLimit; }
        public GroupInsert getGroupInsert() { return groupInsert; }
    }

    /** Receptions arriving together are committed together (one transaction, one commit). */
    public static class GroupInsert {
        /** false: one autocommit INSERT per reception. */
        private boolean enabled = true;
        /** Writer threads (connections) committing groups concurrently. */
        @Min(1) private int writers = 2;
        /** Most rows in one group. */
        @Min(2) private int maxRows = 64;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public int getWriters() { return writers; }
        public void setWriters(int writers) { this.writers = writers; }
        public int getMaxRows() { return maxRows; }
        public void setMaxRows(int maxRows) { this.maxRows = maxRows; }
    }

    /** Per-sender token bucket on the reception endpoint (429 beyond it). */
    public static class RateLimit {
        /** false accepts any rate. */
        private boolean enabled = true;
        /** Sustained requests per second per sender (per instance). */
        @Min(1) private int perSecond = 500;
        /** Requests a sender may send at once. */
        @Min(1) private int burst = 1000;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public int getPerSecond() { return perSecond; }
        public void setPerSecond(int perSecond) { this.perSecond = perSecond; }
        public int getBurst() { return burst; }
        public void setBurst(int burst) { this.burst = burst; }
    }

    /**
     * Outage awareness: after {@code failureThreshold} consecutive system errors from one downstream its
     * circuit opens; while open, rows that need it are deferred without being charged an attempt.
     */
    public static class Circuit {
        /** false charges every system error as an attempt (the plain retry ledger). */
        private boolean enabled = true;
        /** Consecutive system errors (count) from one downstream that open its circuit. */
        @Min(1) private int failureThreshold = 5;
        /** How long an open circuit defers rows before letting trial calls through. */
        @NotNull private Duration openDuration = Duration.ofSeconds(30);

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public int getFailureThreshold() { return failureThreshold; }
        public void setFailureThreshold(int failureThreshold) { this.failureThreshold = failureThreshold; }
        public Duration getOpenDuration() { return openDuration; }
        public void setOpenDuration(Duration openDuration) { this.openDuration = openDuration; }
    }

    /** Encryption at rest of the stored payload (AES-256-GCM, key id stored per row). */
    public static class Crypto {
        /** Encrypt new payloads (on by default in the prod profile). Rows keep whatever they were stored with. */
        private boolean enabled = false;
        /** Id of the key that encrypts new payloads; must be one of {@code keys}. */
        private String activeKey;
        /** Key id -> base64 of 32 random bytes. From a Secret; old ids stay until no row names them. */
        private java.util.Map<String, String> keys = new java.util.LinkedHashMap<>();

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public String getActiveKey() { return activeKey; }
        public void setActiveKey(String activeKey) { this.activeKey = activeKey; }
        public java.util.Map<String, String> getKeys() { return keys; }
        public void setKeys(java.util.Map<String, String> keys) { this.keys = keys; }
    }

    /** Retention of the payload (patient data) of closed rows; metadata and history are kept. */
    public static class Retention {
        /** false keeps every payload (the retention route does not start). */
        private boolean enabled = true;
        /** Payloads of COMPLETED rows are removed this long after the row closed. */
        @NotNull private Duration completed = Duration.ofDays(30);
        /** Payloads of DEAD rows are removed this long after the row died (kept longer for investigation). */
        @NotNull private Duration dead = Duration.ofDays(90);
        /** Quartz cron of the clustered retention job. */
        @NotBlank private String cron = "0 30 3 * * ?";
        /** Rows redacted per statement; the job loops until nothing is due. */
        @Min(1) private int batchSize = 1000;

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public Duration getCompleted() { return completed; }
        public void setCompleted(Duration completed) { this.completed = completed; }
        public Duration getDead() { return dead; }
        public void setDead(Duration dead) { this.dead = dead; }
        public String getCron() { return cron; }
        public void setCron(String cron) { this.cron = cron; }
        public int getBatchSize() { return batchSize; }
        public void setBatchSize(int batchSize) { this.batchSize = batchSize; }
    }

    public static class Security {
        @Valid private final Credentials legacy = new Credentials();
        @Valid private final Credentials ops = new Credentials();

        public Credentials getLegacy() { return legacy; }
        public Credentials getOps() { return ops; }
    }

    public static class Credentials {
        /** HTTP Basic user name. */
        @NotBlank private String username;
        /** HTTP Basic password: from the environment or a Secret, never from a file in the repository. */
        @NotBlank private String password;

        public String getUsername() { return username; }
        public void setUsername(String username) { this.username = username; }
        public String getPassword() { return password; }
        public void setPassword(String password) { this.password = password; }
    }
}
