package com.hospital.surveyinbox.processing;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
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
 * Each fails as an I/O error: a system error of the call, counted against its downstream's circuit.
 */
final class DownstreamAnswerLimits implements ExecChainHandler {

    private final long maxBytes;
    private final long deadlineNanos;

    DownstreamAnswerLimits(long maxBytes, Duration deadline) {
        this.maxBytes = maxBytes;
        this.deadlineNanos = deadline.toNanos();
    }

    /** Ends answers still being read at their call's deadline (a read blocked on a silent socket cannot see it). */
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "downstream-deadlines");
        thread.setDaemon(true);
        return thread;
    });

    @Override
    public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
            throws IOException, HttpException {
        long deadline = System.nanoTime() + deadlineNanos;
        ClassicHttpResponse response = chain.proceed(request, scope);
        Header encoding = response.getFirstHeader("Content-Encoding");
        if (encoding != null && !encoding.getValue().isBlank() && !"identity".equalsIgnoreCase(encoding.getValue().strip())) {
            response.close();
            throw new IOException("downstream answer refused: it has a Content-Encoding, and none was asked for");
        }
        HttpEntity entity = response.getEntity();
        if (entity == null) {
            return response;
        }
        if (entity.getContentLength() > maxBytes) {
            response.close();
            throw new IOException("downstream answer refused: " + entity.getContentLength() + " bytes, more than " + maxBytes);
        }
        AtomicBoolean expired = new AtomicBoolean();
        ScheduledFuture<?> end = DEADLINES.schedule(() -> {
            expired.set(true);
            // the connection is shut at once: a read blocked on it fails now (closing the answer would read
            // the rest of it first, to keep the connection)
            scope.execRuntime.discardEndpoint();
        }, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        response.setEntity(new HttpEntityWrapper(entity) {
            @Override
            public InputStream getContent() throws IOException {
                return new Bounded(super.getContent(), maxBytes, deadline, expired, end);
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
                end.cancel(false);
                super.close();
            }
        });
        return response;
    }

    /** The answer's bytes, failing past the size or the deadline. */
    private static final class Bounded extends FilterInputStream {
        private final long maxBytes;
        private final long deadline;
        private final AtomicBoolean expired;
        private final ScheduledFuture<?> end;
        private long read;

        Bounded(InputStream in, long maxBytes, long deadline, AtomicBoolean expired, ScheduledFuture<?> end) {
            super(in);
            this.maxBytes = maxBytes;
            this.deadline = deadline;
            this.expired = expired;
            this.end = end;
        }

        private void check(long more) throws IOException {
            read += Math.max(0, more);
            if (read > maxBytes) {
                throw new IOException("downstream answer refused: more than " + maxBytes + " bytes");
            }
            if (expired.get() || System.nanoTime() - deadline > 0) {
                throw late();
            }
            if (more < 0) {
                end.cancel(false); // read to its end in time
            }
        }

        private static SocketTimeoutException late() {
            return new SocketTimeoutException("downstream answer not read to its end within the call's deadline");
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
            end.cancel(false);
            super.close();
        }
    }
}
