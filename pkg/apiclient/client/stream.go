package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// sseStream is a server stream read over HTTP/1. The request goes out on
// CloseSend; an error status before the stream starts is returned from
// there, so the generated method returns it, as with gRPC.
type sseStream struct {
	conn   *restConn
	ctx    context.Context
	method string
	req    any
	body   io.ReadCloser
	r      *bufio.Reader
	header http.Header
}

func (s *sseStream) Context() context.Context { return s.ctx }
func (s *sseStream) Trailer() metadata.MD     { return nil }

func (s *sseStream) Header() (metadata.MD, error) {
	md := metadata.MD{}
	for k, v := range s.header {
		md.Append(k, v...)
	}
	return md, nil
}

func (s *sseStream) SendMsg(m any) error {
	if m == nil {
		return status.Errorf(codes.Internal, "%s: no request", s.method)
	}
	s.req = m
	return nil
}

func (s *sseStream) CloseSend() error {
	if s.req == nil {
		return status.Errorf(codes.Internal, "%s: no request sent", s.method)
	}
	req, err := s.conn.newRequest(s.ctx, s.method, s.req)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.conn.hc.Do(req)
	if err != nil {
		return transportError(s.ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return decodeError(resp.StatusCode, body)
	}
	s.body, s.r, s.header = resp.Body, bufio.NewReaderSize(resp.Body, 64<<10), resp.Header
	return nil
}

// streamEnvelope is one message of a stream: {"result": msg} or
// {"error": {...}}.
type streamEnvelope struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		GRPCCode int    `json:"grpc_code"`
		Code     int    `json:"code"`
		Message  string `json:"message"`
	} `json:"error"`
}

// RecvMsg reads the next event into m. Lines are "data: <json>" (SSE);
// blank lines, comments (":") and other SSE fields are skipped, and bare
// JSON lines (NDJSON) are accepted too. It returns io.EOF when the server
// ends the stream, and the stream's error chunk as a gRPC error.
func (s *sseStream) RecvMsg(m any) error {
	if s.r == nil {
		return status.Errorf(codes.Internal, "%s: stream not started", s.method)
	}
	for {
		line, err := s.r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			s.body.Close()
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return transportError(s.ctx, err)
		}
		line = bytes.TrimSpace(line)
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			line = bytes.TrimSpace(data)
		} else if len(line) == 0 || line[0] != '{' {
			continue
		}
		var env streamEnvelope
		if err := json.Unmarshal(line, &env); err != nil {
			return status.Errorf(codes.Internal, "%s: decode a stream message: %v", s.method, err)
		}
		if env.Error != nil {
			c := env.Error.GRPCCode
			if c == 0 {
				c = env.Error.Code
			}
			if c == 0 {
				c = int(codes.Unknown)
			}
			return status.Error(codes.Code(c), env.Error.Message)
		}
		if len(env.Result) == 0 || string(env.Result) == "null" {
			continue
		}
		if err := json.Unmarshal(env.Result, m); err != nil {
			return status.Errorf(codes.Internal, "%s: decode a stream message: %v", s.method, err)
		}
		return nil
	}
}
