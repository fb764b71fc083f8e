package com.hospital.surveyinbox.reception;

import com.hospital.surveyinbox.config.AdapterProperties;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Caps the reception body on the stream, not on Content-Length: a chunked body has no length, and a
 * lying length must not matter either. The body is read into memory up to the cap (64 KiB by default)
 * and handed on; one byte more answers 413 without touching the route. A non-JSON content type answers
 * 415 here too, before Camel's HTTP binding would try to parse a form body. Registered after Spring
 * Security, so an unauthenticated sender cannot make the service read anything.
 */
public class ReceptionBodyLimitFilter extends OncePerRequestFilter {

    /** The reception's one path: any other method there is answered 405 here. */
    static final String RECEPTION_PATH = "/legacy/survey-send-info";

    private static final java.util.Set<String> COMPRESSIONS = java.util.Set.of("gzip", "x-gzip", "deflate", "br", "compress",
            "x-compress", "zstd");

    /** Whether a Content-Encoding value names a compression anywhere in its list. */
    static boolean compressed(String contentEncoding) {
        if (contentEncoding == null) {
            return false;
        }
        for (String coding : contentEncoding.split(",")) {
            String name = coding.split(";", 2)[0].strip().toLowerCase(java.util.Locale.ROOT);
            if (COMPRESSIONS.contains(name)) {
                return true;
            }
        }
        return false;
    }

    /** Request attribute holding the body bytes exactly as received (Camel's binding may decode them). */
    public static final String RAW_BODY = ReceptionBodyLimitFilter.class.getName() + ".rawBody";

    private final AdapterProperties properties;
    private final ReceptionReplyWriter replyWriter;

    public ReceptionBodyLimitFilter(AdapterProperties properties, ReceptionReplyWriter replyWriter) {
        this.properties = properties;
        this.replyWriter = replyWriter;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (!"POST".equals(request.getMethod())) {
            if (RECEPTION_PATH.equals(request.getRequestURI())) {
                // CONTRACT §1: every answer of the reception carries X-Result-Code and its JSON body, a 405 too
                // (Camel's own 405 went out as Boot's generic error page). The body is not read.
                response.setHeader("Allow", "POST");
                replyWriter.write(response, 405, "only POST is accepted here");
                return;
            }
            chain.doFilter(request, response);
            return;
        }
        int limit = properties.getReception().getMaxBodyBytes();
        CachedBodyRequest cached = CachedBodyRequest.read(request, limit);
        if (cached == null) {
            replyWriter.write(response, 413, "body larger than " + limit + " bytes");
            return;
        }
        // checked here, before Camel's binding would parse a form body, in the contract's order: size, then type
        String typeProblem = SurveySendInfoValidator.contentTypeProblem(request.getContentType());
        if (typeProblem != null) {
            replyWriter.write(response, 415, typeProblem);
            return;
        }
        // a compressed body is refused, never decoded: nothing here may expand 64 KiB into megabytes (Camel would
        // unzip a gzip body whose stream reports available bytes). Other values (a charset sent by mistake) are
        // ignored, as they always were: the body is read as it is.
        if (compressed(request.getHeader("Content-Encoding"))) {
            replyWriter.write(response, 415, "compressed bodies (Content-Encoding) are not accepted; send the JSON as it is");
            return;
        }
        request.setAttribute(RAW_BODY, cached.body);
        try {
            chain.doFilter(cached, response);
        } finally {
            // the route has answered (ReceptionHttpEngine runs it on this thread), but the event publish's wireTap
            // copy keeps this request as its message's: while Kafka is away, each of the publish pool's 5,000 queued
            // copies held its whole body (a burst of 64 KiB bodies: 300 MiB of a 768 MiB heap)
            cached.release();
            request.removeAttribute(RAW_BODY);
        }
    }

    /** The request with its body already read and counted (the operator API's limit uses it too). */
    public static final class CachedBodyRequest extends HttpServletRequestWrapper {

        private byte[] body;

        private CachedBodyRequest(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        /**
         * The request with its body read into memory, or null when the body is larger than {@code limit} bytes,
         * whether its Content-Length says so (nothing is read) or the stream does (chunked, or a length that lies):
         * one byte over is never buffered.
         */
        public static CachedBodyRequest read(HttpServletRequest request, int limit) throws IOException {
            if (request.getContentLengthLong() > limit) {
                return null;
            }
            byte[] body = request.getInputStream().readNBytes(limit + 1);
            return body.length > limit ? null : new CachedBodyRequest(request, body);
        }

        /** Forgets the body once the request has been answered: whatever still holds this request holds no bytes. */
        void release() {
            body = new byte[0];
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }

        @Override
        public ServletInputStream getInputStream() {
            ByteArrayInputStream in = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public boolean isFinished() {
                    return in.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("synchronous reads only");
                }

                @Override
                public int read() {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    return in.read(b, off, len);
                }
            };
        }

        @Override
        public BufferedReader getReader() {
            return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
        }
    }
}
