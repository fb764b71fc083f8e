package com.hospital.surveyinbox.processing;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.io.entity.HttpEntityWrapper;

/**
 * What a downstream's answer may be, on every HTTP call of the routes (the outermost step of camel-http's client,
 * {@link CamelHttpTuning}): camel-http reads each answer whole into memory, so a downstream that is broken or
 * hostile could otherwise end the pod or hold a worker without end.
 * <ul>
 *   <li>an answer of more than {@code adapter.http.max-answer-bytes} fails the call (one of hundreds of megabytes,
 *       or a compressed one that unpacks to that, ended the JVM: ExitOnOutOfMemoryError);</li>
 *   <li>an answer with a {@code Content-Encoding} fails it: the client asks for none (content compression is off),
 *       and camel-http would unpack a gzip answer without any bound;</li>
 *   <li>an answer not read to its end within the call's deadline ({@code adapter.http} connect x 2 + response
 *       timeout) fails it: the timeouts are per read, and an answer dripped a byte at a time within them held its
 *       worker for as long as it dripped, its row reset and registered again by another worker.</li>
 * </ul>
 * Each fails as an I/O error when the body is read: a system error of the call, counted against its downstream's
 * circuit. A step that ignores the body ({@code ignoreResponseBody}, the reply) is decided by its status alone.
 */
final class DownstreamAnswerLimits implements ExecChainHandler {

    private final long maxBytes;
    private final long deadlineNanos;

    DownstreamAnswerLimits(long maxBytes, Duration deadline) {
        this.maxBytes = maxBytes;
        this.deadlineNanos = deadline.toNanos();
    }

    /**
     * Ends calls still running at their deadline (a read blocked on a silent socket cannot see it); a cancelled task
     * leaves the queue at once (it holds its call's scope).
     */
    private static final ScheduledThreadPoolExecutor DEADLINES = deadlines();

    private static ScheduledThreadPoolExecutor deadlines() {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "downstream-deadlines");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        return executor;
    }

    @Override
    public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
            throws IOException, HttpException {
        // the connection is shut at once, never closed gracefully: a graceful close reads the rest of the answer
        // first (to keep the connection), however long or slow that rest is
        Runnable discard = scope.execRuntime::discardEndpoint;
        AtomicBoolean expired = new AtomicBoolean();
        // from the start: a head sent a byte at a time is within the per-read timeout as well
        ScheduledFuture<?> end = DEADLINES.schedule(() -> {
            expired.set(true);
            discard.run();
        }, deadlineNanos, TimeUnit.NANOSECONDS);
        ClassicHttpResponse response;
        try {
            response = chain.proceed(request, scope);
        } catch (IOException | HttpException | RuntimeException e) {
            end.cancel(false);
            if (expired.get()) {
                throw Bounded.late();
            }
            throw e;
        }
        if (expired.get()) {
            discard.run();
            throw Bounded.late();
        }
        HttpEntity entity = response.getEntity();
        if (entity == null) {
            end.cancel(false);
            return response;
        }
        // refused when its body is read, not at its head: a step that ignores the body (the reply: only its status
        // says whether the legacy system took it) is not failed by a body it never reads
        Header encoding = response.getFirstHeader("Content-Encoding");
        if (encoding != null && !encoding.getValue().isBlank() && !"identity".equalsIgnoreCase(encoding.getValue().strip())) {
            // and camel-http would unpack it as soon as it opens the body (reading it), ignored or not
            response.removeHeaders("Content-Encoding");
            response.setEntity(refused(entity, "it has a Content-Encoding, and none was asked for", end, discard));
            return response;
        }
        if (entity.getContentLength() > maxBytes) {
            response.setEntity(refused(entity, entity.getContentLength() + " bytes, more than " + maxBytes, end, discard));
            return response;
        }
        response.setEntity(new HttpEntityWrapper(entity) {
            @Override
            public InputStream getContent() throws IOException {
                return new Bounded(super.getContent(), maxBytes, expired, end, discard);
            }

            @Override
            public void writeTo(java.io.OutputStream out) throws IOException {
                try (InputStream in = getContent()) {
                    in.transferTo(out);
                }
            }

            @Override
            public boolean isRepeatable() {
                return false;
            }

            @Override
            public void close() throws IOException {
                closeUnderDeadline(super::close, end);
            }
        });
        return response;
    }

    /**
     * An answer refused unread: reading it fails, and it is never read, not even by its close. camel-http opens the
     * body even when it ignores it, so opening does not fail: the first read does.
     */
    private static HttpEntity refused(HttpEntity entity, String why, ScheduledFuture<?> end, Runnable discard) {
        return new HttpEntityWrapper(entity) {
            @Override
            public InputStream getContent() {
                return new InputStream() {
                    @Override
                    public int read() throws IOException {
                        end.cancel(false);
                        discard.run();
                        throw new IOException("downstream answer refused: " + why);
                    }

                    @Override
                    public int read(byte[] b, int off, int len) throws IOException {
                        return read();
                    }
                };
            }

            @Override
            public void writeTo(java.io.OutputStream out) throws IOException {
                getContent().read();
            }

            @Override
            public boolean isStreaming() {
                return false;
            }

            @Override
            public void close() {
                end.cancel(false);
                discard.run();
            }
        };
    }

    /** Closes (which may read the rest of the answer, still under the deadline), then ends the deadline. */
    private static void closeUnderDeadline(java.io.Closeable closing, ScheduledFuture<?> end) throws IOException {
        try {
            closing.close();
        } finally {
            end.cancel(false);
        }
    }

    /** The answer's bytes, failing past the size or the deadline. */
    private static final class Bounded extends FilterInputStream {
        private final long maxBytes;
        private final AtomicBoolean expired;
        private final ScheduledFuture<?> end;
        private final Runnable discard;
        private long read;

        Bounded(InputStream in, long maxBytes, AtomicBoolean expired, ScheduledFuture<?> end, Runnable discard) {
            super(in);
            this.maxBytes = maxBytes;
            this.expired = expired;
            this.end = end;
            this.discard = discard;
        }

        private void check(long more) throws IOException {
            read += Math.max(0, more);
            if (read > maxBytes) {
                end.cancel(false);
                discard.run(); // the rest is not read, not even by the close
                throw new IOException("downstream answer refused: more than " + maxBytes + " bytes");
            }
            if (expired.get()) {
                throw late();
            }
            if (more < 0) {
                end.cancel(false); // read to its end in time
            }
        }

        static SocketTimeoutException late() {
            return new SocketTimeoutException("downstream call not done within its deadline");
        }

        @Override
        public int read() throws IOException {
            check(0);
            int b;
            try {
                b = super.read();
            } catch (IOException e) {
                throw expired.get() ? late() : e;
            }
            check(b < 0 ? -1 : 1);
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            check(0);
            int n;
            try {
                n = super.read(buffer, offset, length);
            } catch (IOException e) {
                throw expired.get() ? late() : e;
            }
            check(n);
            return n;
        }

        @Override
        public void close() throws IOException {
            closeUnderDeadline(super::close, end);
        }
    }
}
